use gguf_core::metadata::{FromMetadata, ToMetadata};
use gguf_core::write::{Builder, OwnedValue};
use gguf_core::{GgufFile, Metadata};

#[derive(Debug, Default, PartialEq, Metadata)]
#[gguf(prefix = "{arch}")]
struct Hyper {
    #[gguf(arch, key = "general.architecture")]
    arch: String,
    context_length: u32,
    #[gguf(rename = "attention.head_count")]
    heads: u32,
    r#type: Option<String>,
    #[gguf(key = "custom.{arch}.layers")]
    layers: Vec<Vec<u16>>,
    scale: Option<f64>,
}

#[derive(Metadata)]
struct Empty {}

fn main() {
    let h = Hyper {
        arch: "phi3".into(),
        context_length: 4096,
        heads: 32,
        r#type: Some("model".into()),
        layers: vec![vec![1, 2], vec![]],
        scale: None,
    };
    let entries = h.to_metadata(None).unwrap();
    let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["general.architecture", "phi3.context_length", "phi3.attention.head_count", "phi3.type", "custom.phi3.layers"]
    );
    assert_eq!(entries[1].1, OwnedValue::U32(4096));
    assert!(Empty {}.to_metadata(None).unwrap().is_empty());

    let mut b = Builder::new();
    b.set_all(&h).unwrap();
    let mut bytes = Vec::new();
    b.write(&mut bytes).unwrap();
    let file = GgufFile::open(&bytes).unwrap();
    assert_eq!(Hyper::from_gguf(&file).unwrap(), h);
    assert!(Empty::from_gguf(&file).is_ok());
}
