//! Chunk boundaries per language: whole declarations, symbol paths, merging, splitting.
use iret_chunk::{chunk, Chunk, Language, Limits};

fn find<'a>(chunks: &'a [Chunk], name: &str) -> &'a Chunk {
    chunks
        .iter()
        .find(|c| c.defines.iter().any(|d| d == name))
        .unwrap_or_else(|| panic!("no chunk defines {name}: {chunks:#?}"))
}

fn small() -> Limits {
    Limits { max: 400, min: 80 }
}

#[test]
fn typescript_class_methods_get_symbol_paths() {
    let body = "    const x = 1;\n".repeat(12);
    let src = format!(
        "import {{ a }} from './a';\n\nexport class Router {{\n  use(fn: Handler) {{\n{body}  }}\n\n  route(path: string) {{\n{body}  }}\n}}\n\nexport interface Handler {{ (req: Req): void }}\n"
    );
    let chunks = chunk(&src, Some(Language::TypeScript), small());
    let route = find(&chunks, "route");
    assert_eq!(route.symbol, "class Router > method route");
    assert!(route.text.contains("route(path: string)"));
    let use_ = find(&chunks, "use");
    assert!(
        use_.start_line <= 3,
        "class header joins the first method chunk: {use_:?}"
    );
    assert!(find(&chunks, "Handler").text.contains("interface Handler"));
}

#[test]
fn small_typescript_declarations_merge_but_stay_whole() {
    let src =
        "export type A = string;\nexport type B = number;\nexport function f() { return 1; }\n";
    let chunks = chunk(src, Some(Language::TypeScript), Limits::default());
    assert_eq!(chunks.len(), 1, "tiny neighbours merge: {chunks:#?}");
    assert_eq!(chunks[0].defines, vec!["A", "B", "f"]);
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 3));
}

#[test]
fn javascript_assignments_are_declarations() {
    let body = "  var x = 1;\n".repeat(20);
    let src = format!("app.use = function use(fn) {{\n{body}}};\n\napp.route = function route(path) {{\n{body}}};\n");
    let chunks = chunk(&src, Some(Language::JavaScript), small());
    assert_eq!(find(&chunks, "use").start_line, 1);
    assert!(find(&chunks, "route").text.starts_with("app.route"));
}

#[test]
fn python_decorated_functions_and_classes() {
    let body = "        x = 1\n".repeat(20);
    let src = format!("import os\n\n\nclass APIRouter:\n    def add_api_route(self, path):\n{body}\n    @property\n    def routes(self):\n{body}\n\n@app.get('/')\ndef read_root():\n    return {{}}\n");
    let chunks = chunk(&src, Some(Language::Python), small());
    assert_eq!(
        find(&chunks, "add_api_route").symbol,
        "class APIRouter > def add_api_route"
    );
    assert!(find(&chunks, "routes").text.contains("@property"));
    assert!(find(&chunks, "read_root").text.contains("@app.get"));
}

#[test]
fn rust_impl_methods() {
    let body = "        let x = 1;\n".repeat(20);
    let src = format!("pub struct Router {{ routes: Vec<Route> }}\n\nimpl Router {{\n    pub fn route(&mut self) {{\n{body}    }}\n    pub fn nest(&mut self) {{\n{body}    }}\n}}\n");
    let chunks = chunk(&src, Some(Language::Rust), small());
    assert_eq!(find(&chunks, "nest").symbol, "impl Router > fn nest");
    assert!(find(&chunks, "Router").text.contains("pub struct Router"));
}

#[test]
fn go_and_java_declarations() {
    let go = "package gin\n\ntype Engine struct {\n\tpool int\n}\n\nfunc (engine *Engine) Run(addr string) error {\n\treturn nil\n}\n";
    let chunks = chunk(go, Some(Language::Go), Limits::default());
    let all: Vec<&String> = chunks.iter().flat_map(|c| &c.defines).collect();
    assert!(
        all.iter().any(|d| *d == "Engine") && all.iter().any(|d| *d == "Run"),
        "{chunks:#?}"
    );

    let body = "        int x = 1;\n".repeat(20);
    let java = format!("package g;\n\npublic final class Gson {{\n  public String toJson(Object src) {{\n{body}  }}\n  public <T> T fromJson(String json) {{\n{body}  }}\n}}\n");
    let chunks = chunk(&java, Some(Language::Java), small());
    assert_eq!(
        find(&chunks, "fromJson").symbol,
        "class Gson > method fromJson"
    );
}

#[test]
fn unknown_language_uses_line_windows_cut_at_blank_lines() {
    let para = "line of text here\n".repeat(10);
    let src = format!("{para}\n{para}\n{para}\n{para}");
    let chunks = chunk(&src, None, Limits { max: 450, min: 100 });
    assert!(chunks.len() >= 2);
    for w in chunks.windows(2) {
        assert_eq!(w[1].start_line, w[0].end_line + 1, "windows are contiguous");
    }
    assert!(chunks.iter().all(|c| c.text.len() <= 450));
}

#[test]
fn a_line_windows_label_names_the_definitions_it_shows() {
    // C# is chunked by line windows: the namespace leads, the types it holds follow.
    let src = "// Copyright (c) All contributors.\nusing System;\n\nnamespace MessagePack\n{\n    public interface IFormatterResolver\n    {\n    }\n\n    public static class FormatterResolverExtensions\n    {\n    }\n\n    public class A {}\n    public class B {}\n    public class C {}\n}\n";
    let chunks = chunk(
        src,
        Language::from_path(std::path::Path::new("x.cs")),
        Limits {
            max: 4000,
            min: 100,
        },
    );
    assert_eq!(chunks.len(), 1);
    assert_eq!(
        chunks[0].symbol,
        "namespace MessagePack, IFormatterResolver, FormatterResolverExtensions, A (+2)"
    );
    assert!(chunks[0]
        .defines
        .contains(&"IFormatterResolver".to_string()));
}

#[test]
fn oversized_leaf_is_split_into_windows_with_its_symbol() {
    let body = "  x = x + 1;\n".repeat(200);
    let src = format!("function big() {{\n{body}}}\n");
    let chunks = chunk(&src, Some(Language::JavaScript), small());
    assert!(chunks.len() > 3);
    assert!(chunks
        .iter()
        .all(|c| c.text.len() <= 400 || c.start_line == c.end_line));
    let covered: usize = chunks.iter().map(|c| c.end_line - c.start_line + 1).sum();
    assert!(covered >= 200);
}

#[test]
fn hostile_inputs_never_panic() {
    let minified = "var a=1;".repeat(20_000);
    let nested = format!("{}{}", "(".repeat(5_000), ")".repeat(5_000));
    let broken = "class { def ) fn <<< }}} ;;; \u{0}\u{fffd}";
    for lang in [
        None,
        Some(Language::TypeScript),
        Some(Language::Python),
        Some(Language::Rust),
        Some(Language::Go),
        Some(Language::Java),
        Some(Language::JavaScript),
        Some(Language::Ruby),
    ] {
        for src in [minified.as_str(), nested.as_str(), broken, "", "\n\n\n"] {
            let chunks = chunk(src, lang, Limits::default());
            for c in &chunks {
                assert!(c.start_line >= 1 && c.start_line <= c.end_line);
                assert!(c.text.len() <= 9 * 1024);
            }
        }
    }
}

#[test]
fn doc_comments_lead_the_declaration_they_document() {
    let body = "  var x = 1;\n".repeat(12);
    let src = format!("/**\n * Route a path.\n */\napp.route = function route(path) {{\n{body}}};\n\n/**\n * Disable a setting.\n */\napp.disable = function disable(setting) {{\n{body}}};\n");
    let chunks = chunk(&src, Some(Language::JavaScript), small());
    let route = find(&chunks, "route");
    assert!(route.text.starts_with("/**\n * Route"), "{route:?}");
    assert!(!route.text.contains("Disable a setting"), "{route:?}");
    assert!(find(&chunks, "disable").text.contains("Disable a setting"));
}

#[test]
fn ruby_modules_classes_and_methods() {
    let rb_body = "      x = 1\n".repeat(20);
    let rb = format!("module Sinatra\n  class Base\n    def route(verb, path)\n{rb_body}    end\n\n    def self.call(env)\n{rb_body}    end\n  end\nend\n");
    let chunks = chunk(&rb, Some(Language::Ruby), small());
    assert_eq!(
        find(&chunks, "route").symbol,
        "module Sinatra > class Base > def route"
    );
    assert!(find(&chunks, "call").text.contains("def self.call"));

    // Qualified class names are named by their last part.
    let nested = format!("class Sinatra::Wrapper\n  def call(env)\n{rb_body}  end\nend\n");
    let chunks = chunk(&nested, Some(Language::Ruby), small());
    assert_eq!(find(&chunks, "Wrapper").symbol, "class Wrapper");
}

#[test]
fn java_fields_are_named_by_their_variable_not_their_type() {
    let body = "        x = x + 1;\n".repeat(20);
    let src = format!("class Gson {{\n    private final String serializeNulls;\n\n    void toJson() {{\n        int x = 0;\n{body}    }}\n}}\n");
    let chunks = chunk(&src, Some(Language::Java), small());
    assert!(find(&chunks, "serializeNulls")
        .text
        .contains("private final String"));
    assert!(chunks
        .iter()
        .all(|c| !c.defines.contains(&"String".to_string())));
    // An assignment in a method body is a statement, not a declaration.
    assert!(chunks.iter().all(|c| !c.defines.contains(&"x".to_string())));
}

#[test]
fn a_merged_chunk_is_labelled_by_what_it_shows_in_order() {
    // gin's context.go: two short methods in one chunk; the label named the larger
    // (`AsciiJSON`) though the chunk shows `JSON` first.
    let src = "package gin\n\n// JSON serializes the given struct as JSON into the response body.\nfunc (c *Context) JSON(code int, obj any) {\n\tc.Render(code, render.JSON{Data: obj})\n}\n\n// AsciiJSON serializes the given struct as JSON with unicode escaped to ASCII.\nfunc (c *Context) AsciiJSON(code int, obj any) {\n\tc.Render(code, render.AsciiJSON{Data: obj})\n}\n";
    let chunks = chunk(src, Some(Language::Go), Limits::default());
    assert_eq!(chunks.len(), 1, "{chunks:#?}");
    assert_eq!(chunks[0].symbol, "method JSON, AsciiJSON");

    // Past three names the rest are counted.
    let many: String = (0..6)
        .map(|i| format!("func f{i}() int {{ return {i} }}\n\n"))
        .collect();
    let chunks = chunk(
        &format!("package p\n\n{many}"),
        Some(Language::Go),
        Limits::default(),
    );
    assert_eq!(chunks[0].symbol, "func f0, f1, f2, f3 (+2)");
}
