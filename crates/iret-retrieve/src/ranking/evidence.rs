//! Evidence: the files a task points at ([`Pointers`](crate::query::pointers::Pointers)),
//! one bonus per kind, each with its weight in [`Params`](crate::params::Params):
//!
//! * [`mentioned`] — the task names the file (a path, a traceback frame, a module path);
//! * [`raised`] — a traceback the task quotes was raised in the file, or near it (its
//!   frames in the codebase by rank from the innermost);
//! * [`raises`] — the file holds a message or an option name the task quotes;
//! * [`implements`] — the file defines names the task writes as code, rare names
//!   counting more than common ones;
//! * [`titled`] — the file defines what a report's title names.
use crate::query::pointers::Pointers;

fn bonus(map: &std::collections::HashMap<u32, f32>, file: u32, weight: f32) -> f32 {
    weight * map.get(&file).copied().unwrap_or(0.0)
}

pub fn mentioned(p: &Pointers, file: u32, weight: f32) -> f32 {
    bonus(&p.mentioned, file, weight)
}

pub fn raised(p: &Pointers, file: u32, weight: f32) -> f32 {
    bonus(&p.raised, file, weight)
}

pub fn raises(p: &Pointers, file: u32, weight: f32) -> f32 {
    bonus(&p.raises, file, weight)
}

pub fn implements(p: &Pointers, file: u32, weight: f32) -> f32 {
    bonus(&p.defines, file, weight)
}

pub fn titled(p: &Pointers, file: u32, weight: f32) -> f32 {
    bonus(&p.titled, file, weight)
}

/// Why the evidence favours `file`, in words (empty when it does not).
pub fn reasons(p: &Pointers, file: u32) -> Vec<String> {
    let mut out = Vec::new();
    if p.raised.get(&file).is_some_and(|w| *w >= 1.0) {
        out.push("the task's traceback was raised here".to_string());
    } else if p.mentioned.contains_key(&file) {
        out.push("named by the task".to_string());
    }
    if p.raises.contains_key(&file) {
        out.push("holds a message or option the task quotes".to_string());
    }
    let strong_title = p.titled.get(&file).is_some_and(|w| *w >= 0.5);
    if let Some(names) = p.titled_names.get(&file).filter(|_| strong_title) {
        let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
        out.push(format!(
            "defines {}, which the title names",
            shown.join(", ")
        ));
    }
    // A name defined in a handful of files at most says where the API lives.
    let strong_api = p.defines.get(&file).is_some_and(|w| *w >= 0.5);
    if let Some(names) = p.defined_names.get(&file).filter(|_| strong_api) {
        let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
        out.push(format!("defines {}", shown.join(", ")));
    }
    out
}
