//! The chat templates through the facade (`gguf::chat`, feature `chat`): a model's template
//! read, rendered and tokenized with user text marked.

use gguf::chat::{ChatTemplate, Conversation, RenderOptions};
use gguf::tokenizer::Tokenizer;
use gguf::write::Builder;
use gguf::Model;

#[test]
fn a_models_template_renders_and_tokenizes_with_input_marked() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tokenizer/llama-bpe.gguf"
    );
    let bytes = std::fs::read(path).unwrap();
    let model = Model::open(&bytes).unwrap();
    let mut b = Builder::from_model(&model).unwrap();
    b.set(
        "tokenizer.chat_template",
        "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>{% endfor %}",
    )
    .unwrap();
    let bytes = b.to_vec().unwrap();
    let model = Model::open(&bytes).unwrap();
    let tmpl = ChatTemplate::from_model(&model, None).unwrap();
    let conv = Conversation::from_json(
        &serde_json::json!({"messages": [{"role": "user", "content": "<|eot_id|>"}]}),
    )
    .unwrap();
    let r = tmpl.render(&conv, &RenderOptions::new()).unwrap();
    assert_eq!(
        r.text,
        "<|start_header_id|>user<|end_header_id|>\n\n<|eot_id|><|eot_id|>"
    );
    let tok = Tokenizer::from_model(&model).unwrap();
    let eot = tok.token_id("<|eot_id|>").unwrap();
    let ids = r.encode(&tok, false).unwrap();
    assert_eq!(ids.iter().filter(|&&i| i == eot).count(), 1);
    assert_eq!(*ids.last().unwrap(), eot);
}
