//! Abbreviations: code shortens words in its names (`utils`, `cfg`, `ctx`) that a task
//! writes in full ("utility", "configuration", "context").
use iret_index::tokens::stem;

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

/// The stems of the abbreviations code writes for the word whose stem is `long`.
pub fn abbreviations(long: &str) -> Vec<String> {
    TABLE
        .iter()
        .filter(|(_, longs)| longs.iter().any(|l| stem(l) == long))
        .map(|(s, _)| s.to_string())
        .collect()
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
