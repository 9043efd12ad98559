//! A small JSON reader, enough for the manifests of Ollama models
//! (`ollama_store.rs`), so that reading the local store needs neither the
//! `remote` feature nor serde.

/// A JSON value, as much of one as a manifest needs: objects and arrays
/// kept, strings decoded, other scalars only checked.
#[derive(Debug, PartialEq)]
pub(crate) enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    String(String),
    Other,
}

/// Nesting deeper than this is not a manifest (and would exhaust the
/// stack of a recursive reader).
const JSON_DEPTH: u32 = 64;

impl Json {
    pub(crate) fn parse(bytes: &[u8]) -> std::result::Result<Json, String> {
        let mut r = JsonReader { b: bytes, i: 0 };
        let v = r.value(0)?;
        r.ws();
        match r.i == bytes.len() {
            true => Ok(v),
            false => Err(format!("unexpected text at byte {}", r.i)),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
}

struct JsonReader<'a> {
    b: &'a [u8],
    i: usize,
}

impl JsonReader<'_> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(|c| b" \t\r\n".contains(c)) {
            self.i += 1;
        }
    }

    fn expected(&self, what: &str) -> String {
        format!("expected {what} at byte {}", self.i)
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let found = self.b.get(self.i) == Some(&c);
        self.i += usize::from(found);
        found
    }

    fn value(&mut self, depth: u32) -> std::result::Result<Json, String> {
        if depth > JSON_DEPTH {
            return Err(format!(
                "nested deeper than {JSON_DEPTH} at byte {}",
                self.i
            ));
        }
        self.ws();
        match self.b.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut entries = Vec::new();
                if self.eat(b'}') {
                    return Ok(Json::Object(entries));
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return Err(self.expected("':'"));
                    }
                    entries.push((key, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Ok(Json::Object(entries));
                    }
                    if !self.eat(b',') {
                        return Err(self.expected("',' or '}'"));
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Ok(Json::Array(items));
                    }
                    if !self.eat(b',') {
                        return Err(self.expected("',' or ']'"));
                    }
                }
            }
            Some(b'"') => self.string().map(Json::String),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while self
                    .b
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
                match text.parse::<f64>() {
                    Ok(_) => Ok(Json::Other),
                    Err(_) => Err(format!("bad number at byte {start}")),
                }
            }
            _ => Err(self.expected("a value")),
        }
    }

    fn word(&mut self, w: &str) -> std::result::Result<Json, String> {
        match self.b[self.i..].starts_with(w.as_bytes()) {
            true => {
                self.i += w.len();
                Ok(Json::Other)
            }
            false => Err(self.expected(w)),
        }
    }

    fn hex4(&mut self) -> std::result::Result<u32, String> {
        let digits = self
            .b
            .get(self.i..self.i + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.expected("4 hex digits"))?;
        self.i += 4;
        Ok(digits)
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        if self.b.get(self.i) != Some(&b'"') {
            return Err(self.expected("a string"));
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.i) else {
                return Err(self.expected("the end of a string"));
            };
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|_| "a string is not UTF-8".into()),
                b'\\' => {
                    let Some(&e) = self.b.get(self.i) else {
                        return Err(self.expected("an escape"));
                    };
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi)
                                && self.b[self.i..].starts_with(b"\\u")
                            {
                                self.i += 2;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(format!("bad escape at byte {}", self.i - 1)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err(format!("a control character at byte {}", self.i - 1)),
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_reads_what_manifests_hold() {
        let doc =
            Json::parse(br#" {"a": [1, -2.5e3, true, null, "x\u00e9\n\"q\""], "b": {}} "#).unwrap();
        let a = doc.get("a").and_then(Json::as_array).unwrap();
        assert_eq!(a.len(), 5);
        assert_eq!(a[4].as_str(), Some("xé\n\"q\""));
        assert!(doc.get("b").is_some() && doc.get("c").is_none());
        for bad in ["", "{", "{\"a\" 1}", "[1,]", "\"\u{1}\"", "1 2", "tru"] {
            assert!(Json::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }
}
