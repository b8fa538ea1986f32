//! Noise: tests, examples, declaration files (`.d.ts`, Python's `.pyi` stubs), docs,
//! legacy code and superseded version folders are rarely what a task is about; dispatch
//! damps them unless the task asks.
use super::file_stem;
use iret_index::tokens::split_identifier;

const NOISE_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "example",
    "examples",
    "tutorial",
    "tutorials",
    "gallery",
    "galleries",
    "docs",
    "doc",
    "benchmark",
    "benchmarks",
    "bench",
    "fixtures",
    "testdata",
    "mocks",
    "generated",
    "samples",
    "demo",
];

/// Words that mark legacy code in a folder or file name.
const LEGACY_WORDS: &[&str] = &["legacy", "deprecated", "compat"];

/// Tests, examples, declaration files, docs, generated code: rarely what a task is about.
pub fn is_noise_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".d.ts")
        || lower.ends_with(".pyi")
        || lower.contains(".test.")
        || lower.contains(".spec.")
        || lower.contains("_test.")
    {
        return true;
    }
    let file = lower.rsplit('/').next().unwrap_or("");
    if file.starts_with("test_") || file.ends_with("test.java") || file.ends_with("tests.cs") {
        return true;
    }
    lower
        .split('/')
        .rev()
        .skip(1)
        .any(|d| NOISE_DIRS.contains(&d))
}

/// Legacy code by its name: a folder (`legacy/`, `compat/`) or a file
/// (`HttpCacheLegacy.kt`, `deprecated.go`), unless the task speaks of it
/// ("compatibility", "deprecated fields").
pub fn is_legacy(path: &str, concepts: &[String]) -> bool {
    let lower = path.to_ascii_lowercase();
    let dirs = lower.split('/').rev().skip(1).map(str::to_string);
    let file_words = split_identifier(file_stem(path))
        .into_iter()
        .map(str::to_lowercase);
    dirs.chain(file_words).any(|w| {
        LEGACY_WORDS.contains(&w.as_str()) && !concepts.iter().any(|c| c.starts_with(&w[..6]))
    })
}

/// Folders that hold one sub-folder per language.
const LOCALE_DIRS: &[&str] = &["locale", "locales", "i18n", "l10n", "translations"];

/// A language code as a folder name: `tr`, `pt_BR`, `zh-Hans`, `nb_NO`.
fn is_language_code(dir: &str) -> bool {
    let (lang, region) = dir.split_once(['_', '-']).unwrap_or((dir, ""));
    (2..=3).contains(&lang.len())
        && lang.chars().all(|c| c.is_ascii_lowercase())
        && region.len() <= 4
        && region.chars().all(|c| c.is_ascii_alphabetic())
}

/// One language's copy of the translations or locale data (`locale/tr/LC_MESSAGES/x.js`,
/// `conf/locale/de/formats.py`): dozens of near-identical files that hold every message
/// of the code, and are rarely where a task's behaviour lives, unless the task speaks of
/// languages (`locale`, `translation`, `language`).
pub fn is_translation(path: &str, concepts: &[String]) -> bool {
    let dirs: Vec<&str> = path.split('/').collect();
    let per_language = dirs.windows(2).take(dirs.len().saturating_sub(2)).any(|w| {
        LOCALE_DIRS.contains(&w[0].to_ascii_lowercase().as_str()) && is_language_code(w[1])
    });
    per_language
        && !concepts.iter().any(|c| {
            c.starts_with("locale") || c.starts_with("translat") || c.starts_with("languag")
        })
}

/// Noise of any kind: by its path, as legacy code, as one language's translations, or
/// inside a superseded version folder (`older`, `dir/` prefixes).
pub fn is_noise(path: &str, concepts: &[String], older: &[String]) -> bool {
    is_noise_path(path)
        || is_legacy(path, concepts)
        || is_translation(path, concepts)
        || older.iter().any(|d| path.starts_with(d.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_languages_translations_are_noise_unless_the_task_speaks_of_languages() {
        let none: Vec<String> = Vec::new();
        for p in [
            "sphinx/locale/tr/LC_MESSAGES/sphinx.js",
            "sphinx/locale/pt_BR/LC_MESSAGES/sphinx.js",
            "django/conf/locale/de/formats.py",
            "src/i18n/zh-Hans/messages.ts",
        ] {
            assert!(is_translation(p, &none), "{p}");
        }
        for p in [
            "sphinx/locale/__init__.py",
            "django/utils/translation/trans_real.py",
            "src/locale/format.ts",
            "src/locale/messages/index.ts",
        ] {
            assert!(!is_translation(p, &none), "{p}");
        }
        let asks = vec!["translation".to_string()];
        assert!(!is_translation("django/conf/locale/de/formats.py", &asks));
    }

    #[test]
    fn noise_paths() {
        for p in [
            "src/auth.test.ts",
            "types/index.d.ts",
            "lib/matplotlib/axes/_base.pyi",
            "tests/test_app.py",
            "lib/examples/demo.js",
            "galleries/tutorials/text/text_intro.py",
        ] {
            assert!(is_noise_path(p), "{p}");
        }
        for p in [
            "src/auth.ts",
            "lib/matplotlib/axes/_base.py",
            "src/contest/rules.py",
            "lib/testing_utils.rs",
        ] {
            assert!(!is_noise_path(p), "{p}");
        }
    }

    #[test]
    fn legacy_folders_and_files_unless_the_task_speaks_of_them() {
        let none: Vec<String> = Vec::new();
        for p in [
            "cache/HttpCacheLegacy.kt",
            "gin/deprecated.go",
            "v4/classic/compat.ts",
            "auth/legacy_auth.py",
            "src/legacy/auth.ts",
            "src/compat/shim.ts",
        ] {
            assert!(is_legacy(p, &none), "{p}");
        }
        for p in [
            "cache/HttpCache.kt",
            "src/compatible.rs",
            "src/legacyish.rs",
        ] {
            assert!(!is_legacy(p, &none), "{p}");
        }
        let asks = |w: &str| vec![w.to_string()];
        assert!(!is_legacy("v4/classic/compat.ts", &asks("compatibility")));
        assert!(!is_legacy("src/deprecated.rs", &asks("deprecated")));
        assert!(!is_legacy("cache/HttpCacheLegacy.kt", &asks("legacy")));
    }
}
