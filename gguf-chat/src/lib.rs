//! A GGUF model's chat template rendered as llama.cpp renders it.
//!
//! ```
//! use gguf_chat::{ChatTemplate, Conversation, RenderOptions};
//!
//! let tmpl = ChatTemplate::new(
//!     "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
//!      {%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
//!     "", "<|im_end|>",
//! )?;
//! let conv = Conversation::from_json(&serde_json::json!({
//!     "messages": [{"role": "user", "content": "Hi!"}],
//!     "temperature": 0.2
//! }))?;
//! let prompt = tmpl.render(&conv, &RenderOptions::new())?;
//! assert_eq!(prompt.text, "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n");
//! # Ok::<(), gguf_chat::Error>(())
//! ```
//!
//! # How
//!
//! - **The request** ([`Conversation::from_json`]) is read as llama-server reads it
//!   (`common_chat_msgs_parse_oaicompat`): messages become llama.cpp's `common_chat_msg`
//!   (role, content or parts, reasoning_content, name, tool_call_id, tool calls with their
//!   arguments as JSON text) and go to the template as llama.cpp's `to_json_oaicompat` writes
//!   them (content `""` when absent; fields llama.cpp drops are dropped).
//! - **The workarounds** of `common/chat.cpp` are applied to that input, after probing the
//!   template once ([`Caps`]): content parts joined with newlines for a template that reads only
//!   strings, strings made parts for one that reads only parts, `developer` becomes `system`
//!   (unless the template is GPT-OSS's), a leading system message merged into the next one
//!   for a template without a system role, string tool-call arguments parsed to objects for a
//!   template that reads them as objects, StepFun's trimmed contents.
//! - **The context** is llama.cpp's: `messages`, `tools` (when any), `bos_token`,
//!   `eos_token`, `enable_thinking` (true unless set), `add_generation_prompt` (only when
//!   true, as llama.cpp), `datetime` (`%b %d %Y`), `date_string` (`%d %b %Y`), then
//!   [`RenderOptions::extra`] over them.
//! - **The engine** is minijinja with `trim_blocks` and `lstrip_blocks` (llama.cpp's
//!   defaults), lenient undefined values, no auto-escaping, and llama.cpp's own built-ins:
//!   `raise_exception` ([`Error::Raised`]), `strftime_now` (on [`RenderOptions::now`], UTC),
//!   `tojson` with Python's spacing (`", "`, `": "`; `indent`, `separators`, `ensure_ascii`)
//!   and no HTML escaping, `indent` (a string as the width, the trailing newline kept),
//!   `string` of a list or object in Python's `repr`, Python's string methods
//!   (`strip`/`lstrip`/`rstrip` with characters, `split`/`rsplit` with a maximum,
//!   `startswith`/`endswith` with tuples, `replace`, `find`, `count`, `join`, `format` with
//!   positional and named fields,
//!   `title`, `capitalize`, ...) and dict methods (`items`, `keys`, `values`, `get`), and
//!   llama.cpp's text for values: `None`, `True`/`False`, floats as C's `%f` without trailing
//!   zeros (`1.0`, `0.5`), lists and objects in Python's `repr`.
//! - **The prompt**: where the model adds BOS and the prompt starts with the BOS text, the text
//!   is removed (likewise a trailing EOS text), as `common_chat_template_direct_apply` does.
//!
//! # Input marking
//!
//! llama.cpp's engine keeps, for every string, whether it came from the input; its README
//! describes tokenizing the input parts without parsing special tokens. [`Rendered`] carries
//! the same split as byte ranges ([`Rendered::input_ranges`]), found after rendering: each
//! string of the conversation is looked for, in order, inside the output of the template's
//! `{{ ... }}` expressions (minijinja's output spans; literal template text is never input).
//! [`Rendered::encode`] then finds special tokens only in template text, and tokenizes the text
//! between them (template and input together) as llama.cpp's tokenizer would.
//!
//! # Safety
//!
//! A template reaches only the context above: minijinja has no attribute access to host
//! objects (`__class__`, `__globals__`, `cycler.__init__` are undefined), no loader (no
//! include, import or extends reaches a file), no environment or clock besides
//! [`RenderOptions::now`]. Execution is bounded by [`Limits`]: fuel (instructions, and the
//! bytes and list slots that operations create), the text made by formatting values, output
//! bytes, recursion depth and template size, each reported as [`Error::Limit`] naming it.
//!
//! The engine is minijinja 3.1 with a few patches (the `gguf-minijinja` crate, its
//! `PATCHES.md`): a list copied from a chain of concatenations is paid for before it is
//! made, and formatting a value (printing a list, `~`, `join`, `format`, `string`, `tojson`,
//! string methods) spends from [`Limits::format_bytes`] as it writes, since a list can hold one
//! long string millions of times at little cost. A template that doubles a list or a string in
//! a loop, or formats a huge list, stops at a limit within about a second and a few hundred
//! MiB at the default limits, whatever it does; a panic inside the engine is caught and
//! returned as an error.
//!
//! # Known differences from llama.cpp
//!
//! - **Model-specific handlers**: for some families `common_chat_templates_apply` goes
//!   through a dedicated C++ handler. Those that change the prompt are reproduced: Ministral 3's
//!   (reasoning and content as typed blocks) and Gemma 4's (tool results folded into the
//!   assistant message for older templates, a model turn after a closed one); the others render
//!   the generic input (their differences are in parsing the reply, not in the prompt).
//! - **Capabilities** are probed mostly by what reaches the output; llama.cpp records which
//!   inputs a render touched and how. Where it matters they agree: a template that tests
//!   `content is string` reads typed parts only if it iterates or indexes an empty list given
//!   as content (llama.cpp's rule), and tool-call arguments written whole by `+`, `~` or
//!   `{{ }}` are not read as an object. On llama.cpp's `models/templates/` every prompt is
//!   equal.
//! - **Input marking** is recovered after rendering (above) rather than carried through every
//!   string operation: an input the template transforms (other than trimming: split, sliced,
//!   upper-cased) is not marked; role names are never marked (llama.cpp marks them too, and
//!   `bos_token`/`eos_token`, which makes `{{ bos_token }}` plain text there).
//! - **Tokenizing marked prompts**: llama.cpp (this version) marks input but its server still
//!   tokenizes the whole prompt with special tokens parsed; [`Rendered::encode`] does the same
//!   except that special-token text from the conversation stays text (the tests check that a
//!   prompt without such text gets exactly the whole prompt's ids, on every real template).
//! - **Concatenation with `~`** of booleans or undefined next to a non-string, and `none ~
//!   none`: minijinja writes its text where llama.cpp's engine fails.
//! - **Built-ins**: as in llama.cpp's engine, filters and methods are one table per type
//!   (`s.length()`, `''.strip is callable`, `obj.items` the method before an item so named,
//!   `obj['items']` the item); the Python string methods llama.cpp lacks (`find`, `count`,
//!   `isdigit`, ...) are there as well, and `sort` compares strings case-sensitively as
//!   llama.cpp does (whatever `case_sensitive` says).
//! - **Lists inside themselves**: `l.append(l)` (llama.cpp makes a list that never ends when
//!   printed) is refused; lists otherwise change in place as there (`append`, `insert`,
//!   `extend`, `pop`, `remove`, `clear`); `dict.pop` is not there.
//! - **Continuing a final message** (`continue_final_message`) and llama.cpp's
//!   `reasoning_format`/`tool_choice`/grammar outputs are not part of rendering here.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod conversation;
mod engine;
mod error;
mod handlers;
mod lint;
mod options;
mod rendered;
mod template;
mod values;

pub use conversation::{Content, ContentPart, Conversation, Message, Tool, ToolCall};
pub use error::{Error, Limit, Result};
pub use lint::{check_templates, Finding, FindingKind};
pub use options::{Limits, RenderOptions};
pub use rendered::Rendered;
pub use template::{Caps, ChatTemplate};

/// The README's example, run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
