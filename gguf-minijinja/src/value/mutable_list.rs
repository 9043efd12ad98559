//! gguf patch: list literals that `append`, `pop`, `insert`, `extend`, `remove` and `clear`
//! change in place, as in llama.cpp's engine (and Python); upstream's lists are immutable.
//! A list is one value wherever it is held (a `namespace` attribute, a variable), so a change
//! made through one is seen through all, as there.

use std::sync::{Arc, Mutex};

use crate::error::{Error, ErrorKind};
use crate::value::{Enumerator, Object, ObjectRepr, Value};
use crate::vm::State;

/// A list built by a `[...]` literal.
#[derive(Debug, Default)]
pub(crate) struct MutableList(Mutex<Vec<Value>>);

impl MutableList {
    pub(crate) fn new(items: Vec<Value>) -> MutableList {
        MutableList(Mutex::new(items))
    }

    pub(crate) fn len(&self) -> usize {
        self.items().len()
    }

    fn items(&self) -> std::sync::MutexGuard<'_, Vec<Value>> {
        // A panic while the lock is held leaves a list that is still valid.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn bad(msg: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg)
}

/// An index as Python reads it (negative from the end), within `0..=len` when `insert`.
fn index(arg: &Value, len: usize, inserting: bool) -> Result<usize, Error> {
    let i = arg
        .as_i64()
        .ok_or_else(|| bad("list index must be an integer"))?;
    let len = len as i64;
    let i = if i < 0 { i + len } else { i };
    if inserting {
        Ok(i.clamp(0, len) as usize)
    } else if (0..len).contains(&i) {
        Ok(i as usize)
    } else {
        Err(bad("list index out of range"))
    }
}

/// Whether `v` is or holds `list`, looking through lists and objects.
fn holds(v: &Value, list: &Arc<MutableList>, state: &State<'_, '_>) -> Result<bool, Error> {
    let mut pending = vec![v.clone()];
    while let Some(v) = pending.pop() {
        #[cfg(feature = "fuel")]
        if let Some(tracker) = state.fuel_tracker() {
            tracker.consume(crate::vm::fuel::ITEM_COST)?;
        }
        if let Some(l) = v.downcast_object_ref::<MutableList>() {
            if std::ptr::eq(l, Arc::as_ptr(list)) {
                return Ok(true);
            }
        }
        match v.kind() {
            crate::value::ValueKind::Seq => pending.extend(v.try_iter()?),
            crate::value::ValueKind::Map => {
                for k in v.try_iter()? {
                    pending.push(v.get_item(&k).unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    Ok(false)
}

impl Object for MutableList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.items().get(key.as_usize()?).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.items().clone())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        let arg = |i: usize| {
            args.get(i)
                .ok_or_else(|| bad(format!("{method}() takes an argument")))
        };
        match method {
            "append" | "insert" | "extend" => {
                let new: Vec<Value> = match method {
                    "append" => vec![arg(0)?.clone()],
                    "insert" => vec![arg(1)?.clone()],
                    _ => arg(0)?.try_iter()?.collect(),
                };
                // Each slot is paid for as a list literal's is.
                state.charge_value(&Value::from(new.clone()))?;
                // A list inside itself would make printing, comparing and dropping it recurse
                // without end: refused (the walk is paid per value it visits).
                for v in &new {
                    if holds(v, self, state)? {
                        return Err(bad(format!("{method}() would put a list inside itself")));
                    }
                }
                let mut items = self.items();
                if method == "insert" {
                    let at = index(arg(0)?, items.len(), true)?;
                    items.insert(at, new.into_iter().next().unwrap_or_default());
                } else {
                    items.extend(new);
                }
                Ok(Value::from(()))
            }
            "pop" => {
                let mut items = self.items();
                if items.is_empty() {
                    return Err(bad("pop from empty list"));
                }
                let at = match args.first() {
                    Some(i) => index(i, items.len(), false)?,
                    None => items.len() - 1,
                };
                Ok(items.remove(at))
            }
            "remove" => {
                let mut items = self.items();
                let x = arg(0)?;
                let at = items
                    .iter()
                    .position(|v| v == x)
                    .ok_or_else(|| bad("list.remove(x): x not in list"))?;
                items.remove(at);
                Ok(Value::from(()))
            }
            "clear" => {
                self.items().clear();
                Ok(Value::from(()))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}
