//! Abbreviations: code shortens words in its names (`utils`, `cfg`, `ctx`) that a task
//! writes in full ("utility", "configuration", "context").
use iret_index::tokens::stem;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Words code abbreviates in its names, with the words they stand for: `utils.js` is
/// about utilities, `config.py` about configuration. Conventions of code in general, not
/// of one codebase.
const TABLE: &[(&str, &[&str])] = &[
    ("util", &["utility"]),
    ("config", &["configuration"]),
    ("conf", &["configuration"]),
    ("cfg", &["configuration"]),
    ("auth", &["authentication", "authorization"]),
    ("impl", &["implementation"]),
    ("env", &["environment"]),
    ("init", &["initialization", "initialize"]),
    ("param", &["parameter"]),
    ("arg", &["argument"]),
    ("attr", &["attribute"]),
    ("dir", &["directory"]),
    ("repo", &["repository"]),
    ("msg", &["message"]),
    ("err", &["error"]),
    ("ctx", &["context"]),
    ("req", &["request"]),
    ("resp", &["response"]),
    ("fmt", &["format"]),
    ("db", &["database"]),
    ("func", &["function"]),
    ("spec", &["specification"]),
    ("info", &["information"]),
    ("tmpl", &["template"]),
    ("prop", &["property"]),
    ("cmd", &["command"]),
    ("pkg", &["package"]),
    ("lib", &["library"]),
    ("addr", &["address"]),
    ("buf", &["buffer"]),
    ("mgr", &["manager"]),
    ("ext", &["extension"]),
];

/// The stems of the words the abbreviation `short` (a stem) stands for. Every short form
/// in the table is its own stem, so it is compared as written.
pub fn expansions(short: &str) -> impl Iterator<Item = String> + '_ {
    TABLE
        .iter()
        .filter(move |(s, _)| *s == short)
        .flat_map(|(_, long)| long.iter().map(|l| stem(l)))
}

/// The table by the stem of each long form: its short forms, in the table's order (built
/// once: evaluate asks for every concept of every file it judges).
static BY_LONG: LazyLock<HashMap<String, Vec<&'static str>>> = LazyLock::new(|| {
    let mut by_long: HashMap<String, Vec<&'static str>> = HashMap::new();
    for (short, longs) in TABLE {
        for long in *longs {
            let shorts = by_long.entry(stem(long)).or_default();
            if !shorts.contains(short) {
                shorts.push(short);
            }
        }
    }
    by_long
});

/// The stems of the abbreviations code writes for the word whose stem is `long`.
pub fn abbreviations(long: &str) -> &'static [&'static str] {
    BY_LONG.get(long).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_and_expansions_are_stems_both_ways() {
        assert_eq!(
            abbreviations(&stem("configurations")),
            ["config", "conf", "cfg"]
        );
        assert_eq!(abbreviations(&stem("utilities")), ["util"]);
        assert!(abbreviations(&stem("throttle")).is_empty());
        let auth: Vec<String> = expansions("auth").collect();
        assert_eq!(auth, [stem("authentication"), stem("authorization")]);
        for (short, _) in TABLE {
            assert_eq!(stem(short), *short, "a short form is its own stem");
        }
    }
}
