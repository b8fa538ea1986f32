//! Declaration-aware chunking over a tree-sitter parse.
use crate::languages::{Language, Packing, Spec};
use crate::{windows, Chunk, Limits, LineIndex};
use std::time::{Duration, Instant};
use tree_sitter::{Node, Parser};

/// Nodes that wrap a declaration without being one (export, decorators, `const x = …`).
const WRAPPERS: &[&str] = &[
    "export_statement",
    "decorated_definition",
    "lexical_declaration",
    "variable_declaration",
    "type_declaration",
    "const_declaration",
    "var_declaration",
    "ambient_declaration",
    "expression_statement",
    "attribute_item",
];

/// Parse time allowed per file: a base plus a little per byte (1 MB → ~2.5 s).
const PARSE_BUDGET_BASE: Duration = Duration::from_millis(500);
const PARSE_BUDGET_PER_BYTE: Duration = Duration::from_nanos(2000);

/// Deeper nesting than this is treated as an opaque block (split by lines).
const MAX_DEPTH: usize = 48;

/// A contiguous byte range that will become (part of) a chunk.
struct Piece {
    start: usize,
    end: usize,
    symbol: String,
    defines: Vec<String>,
    is_decl: bool,
    is_comment: bool,
}

pub(crate) fn chunk(src: &str, lang: Language, limits: Limits) -> Option<Vec<Chunk>> {
    let spec = lang.spec()?;
    let mut parser = Parser::new();
    parser.set_language(&spec.grammar).ok()?;
    // tree-sitter's error recovery can take minutes on pathological input (found by
    // tests/fuzz.rs): bound the parse; a cancelled parse falls back to line windows.
    let deadline = Instant::now() + PARSE_BUDGET_BASE + PARSE_BUDGET_PER_BYTE * src.len() as u32;
    let mut cancel = |_: &tree_sitter::ParseState| Instant::now() > deadline;
    let bytes = src.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| if i < bytes.len() { &bytes[i..] } else { &[] },
        None,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut cancel)),
    )?;
    let root = tree.root_node();
    let mut pieces = Vec::new();
    let top = Scope {
        path: "",
        depth: 0,
        in_body: false,
    };
    collect(root, &spec, src, limits, top, &mut pieces);
    if pieces.is_empty() {
        return None;
    }
    Some(pack(src, pieces, limits, spec.packing))
}

/// Where in the tree a walk is.
#[derive(Clone, Copy)]
struct Scope<'p> {
    /// The enclosing symbol path (`class Router > method use`).
    path: &'p str,
    depth: usize,
    /// Inside a function body (declarations there are locals).
    in_body: bool,
}

fn collect(node: Node, spec: &Spec, src: &str, limits: Limits, scope: Scope, out: &mut Vec<Piece>) {
    let Scope {
        path,
        depth,
        in_body,
    } = scope;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let size = child.end_byte() - child.start_byte();
        // Inside a function body a declaration is a local: it names nothing.
        let decl = (!in_body).then(|| declaration(child, spec, src)).flatten();
        let child_in_body = in_body || spec.bodies.contains(&child.kind()) && !misparsed(node);
        let child_path = match &decl {
            // A wrapper (`export class X`) and what it wraps name the same thing once.
            Some((label, name)) if path.ends_with(&format!("{label} {name}")) => path.to_string(),
            Some((label, name)) if path.is_empty() => format!("{label} {name}"),
            Some((label, name)) => format!("{path} > {label} {name}"),
            None => path.to_string(),
        };
        let defines: Vec<String> = decl.iter().map(|(_, n)| n.clone()).collect();
        if size > limits.max && child.named_child_count() > 0 && depth < MAX_DEPTH {
            let before = out.len();
            let inner = Scope {
                path: &child_path,
                depth: depth + 1,
                in_body: child_in_body,
            };
            collect(child, spec, src, limits, inner, out);
            if out.len() > before {
                // The header (e.g. `class Foo extends Bar {`) joins the first inner piece.
                out[before].start = out[before].start.min(child.start_byte());
                let mut names = defines;
                names.append(&mut out[before].defines);
                out[before].defines = names;
                if out[before].symbol.is_empty() || decl.is_some() && !out[before].is_decl {
                    out[before].symbol = child_path;
                }
                out[before].is_decl |= decl.is_some();
                continue;
            }
        }
        out.push(Piece {
            start: child.start_byte(),
            end: child.end_byte(),
            symbol: child_path,
            is_decl: decl.is_some(),
            is_comment: child.kind().contains("comment") || is_doc(child, spec, src),
            defines,
        });
    }
}

/// A node with a syntax error among its children: a macro the grammar cannot expand
/// (`NLOHMANN_JSON_NAMESPACE_BEGIN namespace detail {` reads as a function `namespace`)
/// declares nothing, and its block is not a function body.
fn misparsed(node: Node) -> bool {
    let mut cursor = node.walk();
    let bad = node
        .children(&mut cursor)
        .any(|c| c.is_error() || c.is_missing());
    bad
}

/// A node that documents the declaration after it, as a comment does (Elixir's `@doc`).
fn is_doc(node: Node, spec: &Spec, src: &str) -> bool {
    !spec.docs.is_empty()
        && src
            .get(node.start_byte()..node.end_byte())
            .is_some_and(|text| spec.docs.iter().any(|d| text.starts_with(d)))
}

/// `(label, name)` when `node` declares something (directly or through a wrapper).
fn declaration(node: Node, spec: &Spec, src: &str) -> Option<(&'static str, String)> {
    let kind = node.kind();
    if let Some((_, label)) = spec.declarations.iter().find(|(k, _)| *k == kind) {
        if misparsed(node) {
            return None;
        }
        let name = declared_name(node, spec, src)?;
        return Some((keyword_label(node, src).unwrap_or(label), name));
    }
    if let Some(found) = assignment(node, spec, src) {
        return Some(found);
    }
    if let Some(found) = declaring_call(node, spec, src) {
        return Some(found);
    }
    if WRAPPERS.contains(&kind) || spec.wrappers.contains(&kind) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if let Some(d) = declaration(child, spec, src) {
                return Some(d);
            }
        }
    }
    None
}

/// Keywords a grammar folds into one node kind and names in a `declaration_kind` field
/// (Swift's `class_declaration` is also its `struct`, `enum`, `extension` and `actor`).
const DECLARATION_KEYWORDS: &[&str] =
    &["class", "struct", "enum", "extension", "actor", "protocol"];

/// The declaring keyword when the grammar records it (the label then says `struct`, not
/// `class`).
fn keyword_label(node: Node, src: &str) -> Option<&'static str> {
    let keyword = node.child_by_field_name("declaration_kind")?;
    let text = keyword.utf8_text(src.as_bytes()).ok()?;
    DECLARATION_KEYWORDS.iter().copied().find(|k| *k == text)
}

/// An assignment whose left side is a plain (or dotted) name: JS `app.use = function
/// use() {…}`, `module.exports = …`; Python `X = …`; R `f <- function(x) …`.
fn assignment(node: Node, spec: &Spec, src: &str) -> Option<(&'static str, String)> {
    let (_, left, right, values) = spec.assignments.iter().find(|(k, ..)| *k == node.kind())?;
    if !values.is_empty() {
        let value = node.child_by_field_name(right)?;
        if !values.contains(&value.kind()) {
            return None;
        }
    }
    let text = node
        .child_by_field_name(left)?
        .utf8_text(src.as_bytes())
        .ok()?;
    let name = text.rsplit(['.', ':']).next()?.trim();
    let plain = name
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (!name.is_empty() && name.len() <= 80 && plain).then(|| ("assign", name.to_string()))
}

/// A call that declares, by its callee: Elixir's `def name(…)`, `defmodule Name`.
fn declaring_call(node: Node, spec: &Spec, src: &str) -> Option<(&'static str, String)> {
    if spec.calls.is_empty() || node.kind() != "call" {
        return None;
    }
    let callee = node
        .child_by_field_name("target")?
        .utf8_text(src.as_bytes())
        .ok()?;
    let (_, label) = spec.calls.iter().find(|(c, _)| *c == callee)?;
    let mut cursor = node.walk();
    let arguments = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "arguments")?;
    let name = first_name(arguments, spec, 0)?;
    Some((label, name_text(name, src)?))
}

fn declared_name(node: Node, spec: &Spec, src: &str) -> Option<String> {
    let named = ["name", "key", "declarator"]
        .iter()
        .find_map(|f| node.child_by_field_name(f));
    // Without a name field, a name among the children (OCaml's `val x : t` names x, not
    // its type), then the `type` field (Rust's `impl Foo`), then the first name in the
    // declaration's head (OCaml's `let_binding`, Julia's signature, Zig's `const S = …`).
    let child_name = || {
        let mut cursor = node.walk();
        let found = node
            .named_children(&mut cursor)
            .find(|c| spec.name_kinds.contains(&c.kind()));
        found
    };
    let Some(mut field) = named
        .or_else(child_name)
        .or_else(|| node.child_by_field_name("type"))
    else {
        return name_text(first_name(node, spec, 0)?, src);
    };
    // Down through declarators (Java `x = 1`) and qualified names (Ruby `Sinatra::Base`)
    // to the identifier itself.
    for _ in 0..8 {
        let kind = field.kind();
        let inner = if kind.ends_with("declarator") {
            field
                .child_by_field_name("name")
                .or_else(|| field.child_by_field_name("declarator"))
        } else if kind == "scope_resolution" {
            field.child_by_field_name("name")
        } else {
            None
        };
        match inner {
            Some(n) => field = n,
            None => break,
        }
    }
    name_text(field, src)
}

/// Depth of the search for a name in a declaration without a name field: the head, not
/// the body.
const NAME_DEPTH: usize = 4;

/// Parts of a declaration's head that hold other names than the declared one: its body,
/// comments, and annotations (Kotlin's `@OptIn(…) val HttpRedirect` names
/// `HttpRedirect`, not `OptIn`).
const SKIPPED_IN_HEAD: &[&str] = &["comment", "body", "modifiers", "annotation", "attribute"];

/// The first node (pre-order, leftmost first) of one of the spec's name kinds.
fn first_name<'t>(node: Node<'t>, spec: &Spec, depth: usize) -> Option<Node<'t>> {
    if depth > NAME_DEPTH {
        return None;
    }
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find_map(|child| {
        if spec.name_kinds.contains(&child.kind()) {
            Some(child)
        } else if SKIPPED_IN_HEAD.iter().any(|k| child.kind().contains(k)) {
            None
        } else {
            first_name(child, spec, depth + 1)
        }
    });
    found
}

/// A name node's identifier: `Sinatra` of `Sinatra::Base`'s scope is handled above;
/// a dotted name (`Node.Mapping`, Lua's `M.helper`) gives its last part.
fn name_text(node: Node, src: &str) -> Option<String> {
    let text = node.utf8_text(src.as_bytes()).ok()?;
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '"' | '\'');
    let head: String = text.chars().take_while(|c| word(*c) || *c == '.').collect();
    let name: String = head
        .rsplit('.')
        .find(|part| !part.is_empty())
        .unwrap_or("")
        .chars()
        .filter(|c| *c != '"' && *c != '\'')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Merges small neighbours, splits what is still too large, and cuts on whole lines.
fn pack(src: &str, pieces: Vec<Piece>, limits: Limits, packing: Packing) -> Vec<Chunk> {
    let lines = LineIndex::new(src);
    let mut out = Vec::new();
    let mut group: Vec<Piece> = Vec::new();
    let size = |g: &[Piece]| g.last().map_or(0, |l| l.end) - g.first().map_or(0, |f| f.start);
    for piece in pieces {
        let piece_size = piece.end - piece.start;
        if piece_size > limits.max {
            flush(src, &lines, &mut group, &mut out);
            let first = lines.line(piece.start);
            let last = lines.line(piece.end.saturating_sub(1).max(piece.start));
            for mut c in windows::over_lines(src, &lines, first, last, limits) {
                c.symbol = piece.symbol.clone();
                c.defines = piece.defines.clone();
                out.push(c);
            }
            continue;
        }
        let joined = piece.end - group.first().map_or(piece.start, |f| f.start);
        let small = match packing {
            Packing::Fill => true,
            Packing::MergeSmall => size(&group) < limits.min || piece_size < limits.min,
            Packing::Declarations => {
                size(&group) < limits.min || piece_size < limits.min && !piece.is_decl
            }
        };
        // A comment after a substantial group documents what follows: it starts a group.
        let leads = piece.is_comment
            && size(&group) >= limits.min
            && !group.last().is_some_and(|p| p.is_comment);
        // A declaration after its own doc comment stays with it.
        let documented =
            group.last().is_some_and(|p| p.is_comment) && piece.is_decl && joined <= limits.max;
        let fits = small && joined <= limits.max;
        let starts_new = leads || !fits;
        if !group.is_empty() && starts_new && !documented {
            flush(src, &lines, &mut group, &mut out);
        }
        group.push(piece);
    }
    flush(src, &lines, &mut group, &mut out);
    out
}

/// Names listed in a label after its first declaration; more are counted (2% of the
/// semble corpora's chunks hold more; listing up to 8 scored 0.0012 higher on semble dev
/// and 0.0013 lower on vocab-dev's gap tasks, mean iterative NDCG@10: docs/journal/benchmarks.md).
pub(crate) const LABEL_NAMES: usize = 3;

/// What a chunk shows, in its order: the first declaration's symbol path, then the names
/// of the others (`function uv_tcp_init, uv_tcp_bind, uv_tcp_connect`; past three, a
/// count: `(+2)`); the first piece's path when it declares nothing. A class header merged
/// into its first method is context, not a declaration of its own: the method's path
/// already names the class.
fn label(group: &[Piece]) -> String {
    let decls: Vec<&Piece> = group.iter().filter(|p| p.is_decl).collect();
    let encloses = |outer: &Piece| {
        decls.iter().any(|p| {
            p.symbol.len() > outer.symbol.len()
                && p.symbol.starts_with(&outer.symbol)
                && p.symbol[outer.symbol.len()..].starts_with(" > ")
        })
    };
    let mut shown = decls.iter().copied().filter(|p| !encloses(p));
    let Some(first) = shown.next().or(group.first()) else {
        return String::new();
    };
    let mut label = first.symbol.clone();
    let rest: Vec<&str> = shown
        .filter_map(|p| p.defines.first().map(String::as_str))
        .collect();
    append_names(&mut label, &rest);
    label
}

/// Appends the names after a label's first declaration: up to [`LABEL_NAMES`], then a
/// count (`, b, c, d (+2)`).
pub(crate) fn append_names(label: &mut String, rest: &[impl AsRef<str>]) {
    for name in rest.iter().take(LABEL_NAMES) {
        label.push_str(", ");
        label.push_str(name.as_ref());
    }
    if rest.len() > LABEL_NAMES {
        label.push_str(&format!(" (+{})", rest.len() - LABEL_NAMES));
    }
}

fn flush(src: &str, lines: &LineIndex, group: &mut Vec<Piece>, out: &mut Vec<Chunk>) {
    if group.is_empty() {
        return;
    }
    let start = group[0].start;
    let end = group.last().unwrap().end.max(start + 1);
    let first = lines.line(start);
    let last = lines.line((end - 1).min(src.len().saturating_sub(1)));
    let symbol = label(group);
    let mut defines = Vec::new();
    for p in group.iter() {
        for d in &p.defines {
            if !defines.contains(d) {
                defines.push(d.clone());
            }
        }
    }
    let mut text = &src[lines.line_start(first)..lines.line_end(last, src.len())];
    if text.len() > 2 * (end - start).max(1024) {
        // Long lines (minified code): keep the exact bytes, not the whole line.
        text = windows::clamp(src, start, end);
    }
    if !text.trim().is_empty() {
        out.push(Chunk {
            start_line: first + 1,
            end_line: last + 1,
            defines,
            symbol,
            text: windows::truncate(text).to_string(),
        });
    }
    group.clear();
}
