//! The languages with a grammar, and what a declaration looks like in each.
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Language {
    TypeScript,
    Tsx,
    JavaScript,
    Python,
    Rust,
    Go,
    Java,
    Ruby,
}

/// How a grammar names things: node kinds that declare a symbol, with the label used
/// in symbol paths.
pub(crate) struct Spec {
    pub grammar: tree_sitter::Language,
    pub declarations: &'static [(&'static str, &'static str)],
    /// Assignments declare things (`app.use = function …` in JS, `X = …` in Python); in
    /// C-family code they are just statements.
    pub assignments_declare: bool,
}

const TS_DECLS: &[(&str, &str)] = &[
    ("function_declaration", "function"),
    ("generator_function_declaration", "function"),
    ("function_signature", "function"),
    ("class_declaration", "class"),
    ("abstract_class_declaration", "class"),
    ("interface_declaration", "interface"),
    ("type_alias_declaration", "type"),
    ("enum_declaration", "enum"),
    ("method_definition", "method"),
    ("method_signature", "method"),
    ("abstract_method_signature", "method"),
    ("internal_module", "namespace"),
    ("module", "module"),
    ("variable_declarator", "const"),
    ("public_field_definition", "field"),
    ("property_signature", "property"),
    ("pair", "property"),
];

const PY_DECLS: &[(&str, &str)] = &[
    ("function_definition", "def"),
    ("class_definition", "class"),
];

const RUST_DECLS: &[(&str, &str)] = &[
    ("function_item", "fn"),
    ("function_signature_item", "fn"),
    ("struct_item", "struct"),
    ("enum_item", "enum"),
    ("union_item", "union"),
    ("trait_item", "trait"),
    ("impl_item", "impl"),
    ("type_item", "type"),
    ("mod_item", "mod"),
    ("macro_definition", "macro"),
    ("const_item", "const"),
    ("static_item", "static"),
];

const GO_DECLS: &[(&str, &str)] = &[
    ("function_declaration", "func"),
    ("method_declaration", "method"),
    ("type_spec", "type"),
    ("const_spec", "const"),
    ("var_spec", "var"),
    ("method_elem", "method"),
];

const JAVA_DECLS: &[(&str, &str)] = &[
    ("class_declaration", "class"),
    ("interface_declaration", "interface"),
    ("enum_declaration", "enum"),
    ("record_declaration", "record"),
    ("annotation_type_declaration", "annotation"),
    ("method_declaration", "method"),
    ("constructor_declaration", "constructor"),
    ("field_declaration", "field"),
];

const RUBY_DECLS: &[(&str, &str)] = &[
    ("method", "def"),
    ("singleton_method", "def"),
    ("class", "class"),
    ("singleton_class", "class"),
    ("module", "module"),
];

impl Language {
    /// By file extension; None for languages without a grammar here. C, C++, C# and shell
    /// grammars were tried and scored lower on the dev benchmark than line windows with
    /// the definition scanner (BENCHMARKS.md), so those stay on windows.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "go" => Language::Go,
            "java" => Language::Java,
            "rb" | "rake" | "gemspec" => Language::Ruby,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Java => "java",
            Language::Ruby => "ruby",
        }
    }

    pub(crate) fn spec(self) -> Spec {
        let (grammar, declarations): (tree_sitter::Language, _) = match self {
            Language::TypeScript => (tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), TS_DECLS),
            Language::Tsx => (tree_sitter_typescript::LANGUAGE_TSX.into(), TS_DECLS),
            Language::JavaScript => (tree_sitter_javascript::LANGUAGE.into(), TS_DECLS),
            Language::Python => (tree_sitter_python::LANGUAGE.into(), PY_DECLS),
            Language::Rust => (tree_sitter_rust::LANGUAGE.into(), RUST_DECLS),
            Language::Go => (tree_sitter_go::LANGUAGE.into(), GO_DECLS),
            Language::Java => (tree_sitter_java::LANGUAGE.into(), JAVA_DECLS),
            Language::Ruby => (tree_sitter_ruby::LANGUAGE.into(), RUBY_DECLS),
        };
        Spec {
            grammar,
            declarations,
            assignments_declare: matches!(
                self,
                Language::TypeScript | Language::Tsx | Language::JavaScript | Language::Python
            ),
        }
    }
}
