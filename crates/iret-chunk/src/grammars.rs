//! The tree-sitter grammars, loaded from the library build.rs compiled and the binary
//! carries xz-compressed: written to the per-user cache on first use (`iret-bundle`) and
//! opened once per process. A grammar that cannot be had leaves its files to line windows;
//! [`ready`] says why, for the callers that should stop instead (an index build).
use std::path::Path;
use std::sync::OnceLock;

static GRAMMARS: iret_bundle::Bundled =
    iret_bundle::bundled!("libiret-grammars.so", "IRET_GRAMMARS");

static LIBRARY: OnceLock<Result<libloading::Library, String>> = OnceLock::new();

/// The grammars' library could not be written out or opened.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the tree-sitter grammars cannot be loaded: {0}")]
pub struct GrammarError(String);

fn library() -> &'static Result<libloading::Library, String> {
    LIBRARY.get_or_init(|| {
        let dir =
            iret_bundle::write_out("tree-sitter grammars", Path::new("grammars"), &[GRAMMARS])
                .map_err(|e| e.to_string())?;
        let path = dir.join(GRAMMARS.name);
        // SAFETY: the library is the one this build compiled from the grammar crates'
        // sources; its initialisers are the C runtime's only, and it is never unloaded.
        unsafe { libloading::Library::new(&path) }.map_err(|e| {
            format!(
                "{}: {e} (remove it to have it written again)",
                path.display()
            )
        })
    })
}

/// Ok when the grammars are loaded (loading them now if they were not).
pub fn ready() -> Result<(), GrammarError> {
    library()
        .as_ref()
        .map(|_| ())
        .map_err(|e| GrammarError(e.clone()))
}

/// The grammar a `tree_sitter_<name>` symbol of the library returns, if it loads.
pub(crate) fn language(symbol: &str) -> Option<tree_sitter::Language> {
    let lib = library().as_ref().ok()?;
    // SAFETY: every symbol asked for is a grammar's `const TSLanguage *tree_sitter_x(void)`
    // (`Language::grammar`), the signature `LanguageFn` wraps.
    unsafe {
        let f = lib
            .get::<unsafe extern "C" fn() -> *const ()>(symbol.as_bytes())
            .ok()?;
        Some(tree_sitter_language::LanguageFn::from_raw(*f).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_its_grammar_in_the_library() {
        ready().unwrap();
        for lang in crate::Language::ALL {
            let (symbol, _) = lang.grammar();
            let grammar = language(symbol).unwrap_or_else(|| panic!("{symbol} is missing"));
            assert!(grammar.node_kind_count() > 10, "{symbol}");
        }
        assert!(language("tree_sitter_no_such_language").is_none());
    }
}
