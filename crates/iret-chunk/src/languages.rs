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
    Php,
    Swift,
    Haskell,
    Lua,
    Zig,
    OCaml,
    OCamlInterface,
    Dart,
    ObjC,
    Julia,
    R,
    Kotlin,
    Scala,
    Elixir,
    C,
}

/// How a grammar names things: node kinds that declare a symbol, with the label used
/// in symbol paths.
pub(crate) struct Spec {
    pub grammar: tree_sitter::Language,
    pub declarations: &'static [(&'static str, &'static str)],
    /// Assignments that declare what their left side names, any right-hand side when its
    /// kinds are empty (`app.use = function …` in JS, `X = …` in Python, `f <- function(x)`
    /// in R). In C-family code assignments are just statements.
    pub assignments: &'static [Assignment],
    /// Calls that declare (Elixir's `def name(…)`, `defmodule Name`): `(callee, label)`.
    pub calls: &'static [(&'static str, &'static str)],
    /// Node kinds that hold a name, for declarations without a `name` field (OCaml's
    /// `let_binding`, Julia's signature, Zig's `const S = struct`): the first such node
    /// in the declaration's head names it.
    pub name_kinds: &'static [&'static str],
    /// Node kinds that wrap one declaration in this grammar (Objective-C's
    /// `implementation_definition`, Dart's `member_declaration`), beside the shared ones.
    pub wrappers: &'static [&'static str],
    /// Text that opens a node documenting the declaration after it, kept with that
    /// declaration as a doc comment is (Elixir's `@doc`, `@spec`).
    pub docs: &'static [&'static str],
    /// Node kinds of a function body, where declarations are locals and name nothing
    /// (C's `compound_statement`).
    pub bodies: &'static [&'static str],
    /// How sibling pieces are packed into chunks.
    pub packing: Packing,
}

/// How the pieces of one level of the tree become chunks (measured per language on the
/// dev set, docs/journal/benchmarks.md, issue #17).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    /// A declaration of at least `Limits::min` keeps its own chunk; smaller pieces merge
    /// with their neighbours.
    Declarations,
    /// Declarations smaller than `Limits::min` merge too (Kotlin's one-line `val`s,
    /// Elixir's one-line `def`s).
    MergeSmall,
    /// Adjacent siblings fill a chunk up to `Limits::max`, as in cAST (Zhang et al.,
    /// 2025): whole declarations, as many as the budget holds (one larger than the budget
    /// is split on its children first).
    Fill,
}

/// `(node kind, left field, right field, right-hand kinds)` of an assignment that declares.
pub(crate) type Assignment = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

const NO_ASSIGNMENTS: &[Assignment] = &[];
const JS_ASSIGNMENTS: &[Assignment] = &[("assignment_expression", "left", "right", &[])];
const PY_ASSIGNMENTS: &[Assignment] = &[("assignment", "left", "right", &[])];
const R_ASSIGNMENTS: &[Assignment] = &[("binary_operator", "lhs", "rhs", &["function_definition"])];
const IDENTIFIER: &[&str] = &["identifier"];

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

const PHP_DECLS: &[(&str, &str)] = &[
    ("class_declaration", "class"),
    ("interface_declaration", "interface"),
    ("trait_declaration", "trait"),
    ("enum_declaration", "enum"),
    ("function_definition", "function"),
    ("method_declaration", "method"),
    ("property_declaration", "property"),
    ("const_element", "const"),
];

const SWIFT_DECLS: &[(&str, &str)] = &[
    ("class_declaration", "class"),
    ("protocol_declaration", "protocol"),
    ("function_declaration", "func"),
    ("protocol_function_declaration", "func"),
    ("init_declaration", "init"),
    ("subscript_declaration", "subscript"),
    ("property_declaration", "var"),
    ("protocol_property_declaration", "var"),
    ("typealias_declaration", "typealias"),
    ("associatedtype_declaration", "associatedtype"),
    ("enum_entry", "case"),
];

const HASKELL_DECLS: &[(&str, &str)] = &[
    ("function", "function"),
    ("bind", "function"),
    ("signature", "signature"),
    ("data_type", "data"),
    ("newtype", "newtype"),
    ("type_synonym", "type"),
    ("type_family", "type"),
    ("class", "class"),
    ("instance", "instance"),
];

const LUA_DECLS: &[(&str, &str)] = &[("function_declaration", "function")];

const ZIG_DECLS: &[(&str, &str)] = &[
    ("function_declaration", "fn"),
    ("variable_declaration", "const"),
    ("test_declaration", "test"),
    ("container_field", "field"),
];

const OCAML_DECLS: &[(&str, &str)] = &[
    ("value_definition", "let"),
    ("type_definition", "type"),
    ("module_definition", "module"),
    ("module_type_definition", "module type"),
    ("class_definition", "class"),
    ("external", "external"),
    ("exception_definition", "exception"),
    ("value_specification", "val"),
    ("method_definition", "method"),
];

const DART_DECLS: &[(&str, &str)] = &[
    ("class_declaration", "class"),
    ("mixin_declaration", "mixin"),
    ("extension_declaration", "extension"),
    ("extension_type_declaration", "extension type"),
    ("enum_declaration", "enum"),
    ("function_signature", "function"),
    ("getter_signature", "get"),
    ("setter_signature", "set"),
    ("constructor_signature", "constructor"),
    ("factory_constructor_signature", "factory"),
    ("type_alias", "typedef"),
    ("initialized_identifier", "field"),
    ("static_final_declaration", "const"),
];

const OBJC_DECLS: &[(&str, &str)] = &[
    ("class_interface", "interface"),
    ("class_implementation", "implementation"),
    ("protocol_declaration", "protocol"),
    ("method_definition", "method"),
    ("method_declaration", "method"),
    ("property_declaration", "property"),
    ("function_definition", "function"),
    ("struct_specifier", "struct"),
    ("enum_specifier", "enum"),
];

const JULIA_DECLS: &[(&str, &str)] = &[
    ("function_definition", "function"),
    ("macro_definition", "macro"),
    ("struct_definition", "struct"),
    ("abstract_definition", "abstract type"),
    ("primitive_definition", "primitive type"),
    ("module_definition", "module"),
    ("const_statement", "const"),
];

const C_DECLS: &[(&str, &str)] = &[
    ("function_definition", "function"),
    ("declaration", "decl"),
    ("type_definition", "typedef"),
    ("struct_specifier", "struct"),
    ("union_specifier", "union"),
    ("enum_specifier", "enum"),
    ("preproc_function_def", "macro"),
    ("preproc_def", "define"),
    ("field_declaration", "field"),
];

/// R declares by assignment, Elixir by calls: no declaring node kinds.
const NO_DECLS: &[(&str, &str)] = &[];

const KOTLIN_DECLS: &[(&str, &str)] = &[
    ("class_declaration", "class"),
    ("object_declaration", "object"),
    ("companion_object", "companion object"),
    ("function_declaration", "fun"),
    ("property_declaration", "val"),
    ("type_alias", "typealias"),
];

const SCALA_DECLS: &[(&str, &str)] = &[
    ("class_definition", "class"),
    ("object_definition", "object"),
    ("trait_definition", "trait"),
    ("enum_definition", "enum"),
    ("function_definition", "def"),
    ("function_declaration", "def"),
    ("val_definition", "val"),
    ("var_definition", "var"),
    ("val_declaration", "val"),
    ("type_definition", "type"),
    ("given_definition", "given"),
    ("extension_definition", "extension"),
];

const ELIXIR_CALLS: &[(&str, &str)] = &[
    ("defmodule", "defmodule"),
    ("defprotocol", "defprotocol"),
    ("defimpl", "defimpl"),
    ("def", "def"),
    ("defp", "defp"),
    ("defmacro", "defmacro"),
    ("defmacrop", "defmacrop"),
    ("defguard", "defguard"),
    ("defdelegate", "defdelegate"),
    ("defstruct", "defstruct"),
    ("defexception", "defexception"),
    ("defcallback", "defcallback"),
];

impl Language {
    /// Every language with a grammar.
    pub const ALL: &'static [Language] = &[
        Language::TypeScript,
        Language::Tsx,
        Language::JavaScript,
        Language::Python,
        Language::Rust,
        Language::Go,
        Language::Java,
        Language::Ruby,
        Language::Php,
        Language::Swift,
        Language::Haskell,
        Language::Lua,
        Language::Zig,
        Language::OCaml,
        Language::OCamlInterface,
        Language::Dart,
        Language::ObjC,
        Language::Julia,
        Language::R,
        Language::Kotlin,
        Language::Scala,
        Language::Elixir,
        Language::C,
    ];

    /// By file extension; None for languages without a grammar here. C++, C# and shell
    /// grammars, filled as C is, scored lower on the dev benchmark than line windows with
    /// the definition scanner (docs/journal/benchmarks.md, session 11), so those stay on windows; a
    /// `.h` is read as C (C++ headers then parse with errors where they use C++). `.m` is
    /// read as Objective-C (MATLAB shares the extension; its files then fall back to windows
    /// where the parse fails).
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
            "php" => Language::Php,
            "swift" => Language::Swift,
            "hs" | "lhs" => Language::Haskell,
            "lua" => Language::Lua,
            "zig" => Language::Zig,
            "ml" => Language::OCaml,
            "mli" => Language::OCamlInterface,
            "dart" => Language::Dart,
            "m" | "mm" => Language::ObjC,
            "jl" => Language::Julia,
            "r" => Language::R,
            "kt" | "kts" => Language::Kotlin,
            "scala" | "sc" => Language::Scala,
            "ex" | "exs" => Language::Elixir,
            "c" | "h" => Language::C,
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
            Language::Php => "php",
            Language::Swift => "swift",
            Language::Haskell => "haskell",
            Language::Lua => "lua",
            Language::Zig => "zig",
            Language::OCaml => "ocaml",
            Language::OCamlInterface => "ocaml-interface",
            Language::Dart => "dart",
            Language::ObjC => "objective-c",
            Language::Julia => "julia",
            Language::R => "r",
            Language::Kotlin => "kotlin",
            Language::Scala => "scala",
            Language::Elixir => "elixir",
            Language::C => "c",
        }
    }

    /// What chunking needs of the language (None when its grammar cannot be loaded).
    pub(crate) fn spec(self) -> Option<Spec> {
        let (symbol, declarations) = self.grammar();
        Some(Spec {
            grammar: crate::grammars::language(symbol)?,
            declarations,
            assignments: self.assignments(),
            calls: if self == Language::Elixir {
                ELIXIR_CALLS
            } else {
                &[]
            },
            name_kinds: self.name_kinds(),
            wrappers: self.wrappers(),
            docs: match self {
                Language::Elixir => &["@doc ", "@doc\n", "@spec ", "@impl ", "@typedoc "],
                _ => &[],
            },
            bodies: match self {
                Language::C => &["compound_statement"],
                _ => &[],
            },
            packing: self.packing(),
        })
    }

    /// The `tree_sitter_<name>` symbol the grammars' library exports for it and its declaring
    /// node kinds.
    pub(crate) fn grammar(self) -> (&'static str, &'static [(&'static str, &'static str)]) {
        match self {
            Language::TypeScript => ("tree_sitter_typescript", TS_DECLS),
            Language::Tsx => ("tree_sitter_tsx", TS_DECLS),
            Language::JavaScript => ("tree_sitter_javascript", TS_DECLS),
            Language::Python => ("tree_sitter_python", PY_DECLS),
            Language::Rust => ("tree_sitter_rust", RUST_DECLS),
            Language::Go => ("tree_sitter_go", GO_DECLS),
            Language::Java => ("tree_sitter_java", JAVA_DECLS),
            Language::Ruby => ("tree_sitter_ruby", RUBY_DECLS),
            Language::Php => ("tree_sitter_php", PHP_DECLS),
            Language::Swift => ("tree_sitter_swift", SWIFT_DECLS),
            Language::Haskell => ("tree_sitter_haskell", HASKELL_DECLS),
            Language::Lua => ("tree_sitter_lua", LUA_DECLS),
            Language::Zig => ("tree_sitter_zig", ZIG_DECLS),
            Language::OCaml => ("tree_sitter_ocaml", OCAML_DECLS),
            Language::OCamlInterface => ("tree_sitter_ocaml_interface", OCAML_DECLS),
            Language::Dart => ("tree_sitter_dart", DART_DECLS),
            Language::ObjC => ("tree_sitter_objc", OBJC_DECLS),
            Language::Julia => ("tree_sitter_julia", JULIA_DECLS),
            Language::R => ("tree_sitter_r", NO_DECLS),
            Language::Kotlin => ("tree_sitter_kotlin", KOTLIN_DECLS),
            Language::Scala => ("tree_sitter_scala", SCALA_DECLS),
            Language::Elixir => ("tree_sitter_elixir", NO_DECLS),
            Language::C => ("tree_sitter_c", C_DECLS),
        }
    }

    /// Measured per language on the dev set (docs/journal/benchmarks.md, issue #17): Kotlin's and
    /// Elixir's many one-line declarations embed better together; Go's, Scala's and
    /// Ruby's lose when merged; C's short functions, prototypes and macros fill chunks as
    /// its line windows did (filled C++, C# and shell lost to their windows).
    fn packing(self) -> Packing {
        match self {
            Language::Kotlin | Language::Elixir => Packing::MergeSmall,
            Language::C => Packing::Fill,
            _ => Packing::Declarations,
        }
    }

    fn assignments(self) -> &'static [Assignment] {
        match self {
            Language::TypeScript | Language::Tsx | Language::JavaScript => JS_ASSIGNMENTS,
            Language::Python => PY_ASSIGNMENTS,
            Language::R => R_ASSIGNMENTS,
            _ => NO_ASSIGNMENTS,
        }
    }

    fn name_kinds(self) -> &'static [&'static str] {
        match self {
            Language::OCaml | Language::OCamlInterface => &[
                "value_name",
                "type_constructor",
                "module_name",
                "module_type_name",
                "class_name",
                "constructor_name",
            ],
            Language::Swift => &["simple_identifier", "type_identifier"],
            Language::Kotlin => &["identifier", "simple_identifier", "type_identifier"],
            Language::Haskell => &["variable", "name", "constructor"],
            Language::Elixir => &["identifier", "alias"],
            Language::Php => &["name"],
            _ => IDENTIFIER,
        }
    }

    fn wrappers(self) -> &'static [&'static str] {
        match self {
            Language::ObjC => &["implementation_definition"],
            Language::C => &["linkage_specification"],
            Language::Dart => &[
                "member_declaration",
                "method_declaration",
                "declaration",
                "method_signature",
                "initialized_identifier_list",
                "static_final_declaration_list",
                "top_level_variable_declaration",
            ],
            _ => &[],
        }
    }
}
