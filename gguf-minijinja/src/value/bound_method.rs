//! gguf patch: a method read as an attribute (`''.strip`, `{}.keys`), as llama.cpp's engine
//! has them: a value that is callable, and calling it is the method call.

use std::fmt;
use std::sync::Arc;

use crate::error::Error;
use crate::value::{Object, ObjectRepr, Value};
use crate::vm::State;

/// `receiver.name`, the method `name` bound to `receiver`.
#[derive(Debug)]
pub(crate) struct BoundMethod {
    pub(crate) receiver: Value,
    pub(crate) name: Arc<str>,
}

impl Object for BoundMethod {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        self.receiver.call_method(state, &self.name, args)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<built-in method {}>", self.name)
    }
}
