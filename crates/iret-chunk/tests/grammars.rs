//! The grammars added for issue #17: each language's declarations become named chunks,
//! including the ones a grammar does not name with a `name` field (Elixir's `def` is a
//! call, R's `f <- function`, Zig's `const S = struct`, OCaml's `let`, Julia's
//! signature). Every snippet is written in the language's ordinary style; the checks on
//! whole repositories are in `tests/real_code.rs`.
use iret_chunk::{chunk, Chunk, Language, Limits};
use std::path::Path;

/// Small limits: each declaration of a snippet is its own chunk.
fn tight() -> Limits {
    Limits { max: 90, min: 0 }
}

/// The chunk that defines `name`, with its symbol path.
fn defining<'a>(chunks: &'a [Chunk], name: &str) -> &'a Chunk {
    chunks
        .iter()
        .find(|c| c.defines.iter().any(|d| d == name))
        .unwrap_or_else(|| panic!("no chunk defines {name}: {chunks:#?}"))
}

/// Chunks `src` as the language of `file`, asserting the extension maps to a grammar.
fn chunks_of(file: &str, src: &str) -> Vec<Chunk> {
    let lang = Language::from_path(Path::new(file)).unwrap_or_else(|| panic!("{file}"));
    chunk(src, Some(lang), tight())
}

/// `names` are each defined by a chunk whose symbol path ends with `label name` (or, in
/// a chunk that packs several declarations, lists `name` after the first) and whose text
/// starts the definition (the chunk shows what its label says).
fn assert_defines(chunks: &[Chunk], expected: &[(&str, &str, &str)]) {
    for (label, name, head) in expected {
        let c = defining(chunks, name);
        let mut parts = c.symbol.split(" (+").next().unwrap_or("").split(", ");
        let path = parts.next().unwrap_or("");
        assert!(
            path.ends_with(&format!("{label} {name}")) || parts.any(|n| n == *name),
            "{name}: symbol {:?}",
            c.symbol
        );
        assert!(c.text.contains(head), "{name}: text {:?}", c.text);
    }
}

#[test]
fn php_classes_methods_and_functions() {
    let src = r#"<?php
namespace App\Http;

interface Middleware
{
    public function handle(Request $request, callable $next): Response;
}

final class Throttle implements Middleware
{
    private const int LIMIT = 60;

    public function handle(Request $request, callable $next): Response
    {
        if ($this->tooMany($request)) {
            return new Response(429);
        }
        return $next($request);
    }
}

function throttle_key(Request $request): string
{
    return sha1($request->ip());
}
"#;
    let chunks = chunks_of("src/Throttle.php", src);
    assert_defines(
        &chunks,
        &[
            ("interface", "Middleware", "interface Middleware"),
            ("class", "Throttle", "final class Throttle"),
            ("method", "handle", "public function handle"),
            ("const", "LIMIT", "const int LIMIT"),
            ("function", "throttle_key", "function throttle_key"),
        ],
    );
    assert_eq!(
        defining(&chunks, "handle").symbol,
        "class Throttle > method handle",
        "the interface is small enough to stay whole; the class's method is its own chunk"
    );
}

#[test]
fn swift_types_functions_and_properties() {
    let src = r#"import Foundation

protocol TokenStore {
    func token(for user: String) -> String?
}

struct Session {
    let user: String
    var expiresAt: Date

    func isExpired(now: Date = Date()) -> Bool {
        return now >= expiresAt
    }
}

extension Session: Codable {
    init(from decoder: Decoder) throws {
        fatalError("unused")
    }
}
"#;
    let chunks = chunks_of("Sources/Session.swift", src);
    assert_defines(
        &chunks,
        &[
            ("protocol", "TokenStore", "protocol TokenStore"),
            ("struct", "Session", "struct Session"),
            ("func", "isExpired", "func isExpired"),
        ],
    );
    assert_eq!(
        defining(&chunks, "isExpired").symbol,
        "struct Session > func isExpired"
    );
}

#[test]
fn haskell_signatures_functions_and_data_inside_the_declarations_wrapper() {
    let src = r#"module Data.Throttle (Bucket(..), allow) where

import qualified Data.Map as M

-- | A token bucket per client.
data Bucket = Bucket
  { tokens :: Int
  , refill :: Int
  } deriving (Show, Eq)

allow :: Int -> Bucket -> (Bool, Bucket)
allow cost b
  | tokens b >= cost = (True, b { tokens = tokens b - cost })
  | otherwise = (False, b)

newtype ClientId = ClientId String
"#;
    let chunks = chunks_of("src/Data/Throttle.hs", src);
    assert_defines(
        &chunks,
        &[
            ("data", "Bucket", "data Bucket"),
            ("signature", "allow", "allow :: Int"),
            ("newtype", "ClientId", "newtype ClientId"),
        ],
    );
}

#[test]
fn lua_functions_local_and_dotted() {
    let src = r#"local M = {}

local function clamp(x, lo, hi)
  if x < lo then return lo end
  if x > hi then return hi end
  return x
end

function M.round(x, increment)
  if increment then return M.round(x / increment) * increment end
  return x >= 0 and math.floor(x + .5) or math.ceil(x - .5)
end

return M
"#;
    let chunks = chunks_of("lume.lua", src);
    assert_defines(
        &chunks,
        &[
            ("function", "clamp", "local function clamp"),
            ("function", "round", "function M.round"),
        ],
    );
}

#[test]
fn zig_functions_tests_and_const_structs() {
    let src = r#"const std = @import("std");

pub const Request = struct {
    method: []const u8,
    body_len: usize,

    pub fn canKeepAlive(self: *const Request) bool {
        return self.body_len == 0;
    }
};

test "keep alive without a body" {
    const r = Request{ .method = "GET", .body_len = 0 };
    try std.testing.expect(r.canKeepAlive());
}
"#;
    let chunks = chunks_of("src/request.zig", src);
    assert_defines(
        &chunks,
        &[
            ("const", "Request", "pub const Request = struct"),
            ("fn", "canKeepAlive", "pub fn canKeepAlive"),
        ],
    );
    assert_eq!(
        defining(&chunks, "canKeepAlive").symbol,
        "const Request > fn canKeepAlive"
    );
}

#[test]
fn ocaml_lets_types_modules_and_interface_vals() {
    let src = r#"type component = [ `Scheme | `Host | `Path ]

let pct_encode ?(component = `Path) s =
  let b = Buffer.create (String.length s) in
  String.iter (fun c -> Buffer.add_char b c) s;
  Buffer.contents b

module Generic = struct
  let sub_delims a =
    Array.iter (fun c -> a.(Char.code c) <- true) [| '!'; '$' |];
    a
end
"#;
    let chunks = chunks_of("lib/uri.ml", src);
    assert_defines(
        &chunks,
        &[
            ("type", "component", "type component"),
            ("let", "pct_encode", "let pct_encode"),
            ("let", "sub_delims", "let sub_delims"),
        ],
    );
    assert!(defining(&chunks, "sub_delims")
        .symbol
        .starts_with("module Generic"));
    let mli = "type t\n\n(** Percent-encode a string. *)\nval pct_encode : ?component:component -> string -> string\n\nval compare : t -> t -> int\n";
    let chunks = chunks_of("lib/uri.mli", mli);
    assert_defines(
        &chunks,
        &[
            ("val", "pct_encode", "val pct_encode"),
            ("val", "compare", "val compare"),
        ],
    );
}

#[test]
fn dart_classes_members_and_functions() {
    let src = r#"import 'dart:math' as math;

class ArgParser {
  final Map<String, Option> _options;

  ArgParser({bool allowTrailingOptions = true}) : _options = {};

  Option addFlag(String name, {String? help}) {
    return _addOption(name, help: help, isFlag: true);
  }

  int get optionCount => _options.length;
}

String padRight(String source, int length) =>
    source + ' ' * math.max(0, length - source.length);
"#;
    let chunks = chunks_of("lib/src/arg_parser.dart", src);
    assert_defines(
        &chunks,
        &[
            ("class", "ArgParser", "class ArgParser"),
            ("function", "addFlag", "Option addFlag"),
            ("get", "optionCount", "int get optionCount"),
            ("function", "padRight", "String padRight"),
        ],
    );
}

#[test]
fn objective_c_interfaces_implementations_and_methods() {
    let src = r#"#import "FMResultSet.h"

@interface FMResultSet ()
@property (nonatomic, retain) NSMutableDictionary *columnNameToIndexMap;
@end

@implementation FMResultSet

- (void)close {
    [_statement reset];
    _statement = nil;
}

- (int)columnIndexForName:(NSString*)columnName {
    NSNumber *n = [[self columnNameToIndexMap] objectForKey:[columnName lowercaseString]];
    return n ? [n intValue] : -1;
}

@end
"#;
    let chunks = chunks_of("src/fmdb/FMResultSet.m", src);
    assert_defines(
        &chunks,
        &[
            ("method", "close", "- (void)close"),
            ("method", "columnIndexForName", "- (int)columnIndexForName"),
        ],
    );
    assert!(defining(&chunks, "close")
        .symbol
        .starts_with("implementation FMResultSet"));
}

#[test]
fn julia_functions_structs_macros_and_modules() {
    let src = r#"module JSONWriter

struct WriteStyle
    indent::Int
end

function write_string(io::IO, s::AbstractString)
    print(io, '"', escape_string(s), '"')
end

macro omit_null(ex)
    return esc(ex)
end

end
"#;
    let chunks = chunks_of("src/write.jl", src);
    assert_defines(
        &chunks,
        &[
            ("struct", "WriteStyle", "struct WriteStyle"),
            ("function", "write_string", "function write_string"),
            ("macro", "omit_null", "macro omit_null"),
        ],
    );
}

#[test]
fn r_functions_are_assignments() {
    let src = r#"#' Interpolate strings
#' @export
glue_data <- function(.x, ..., .sep = "", .envir = parent.frame()) {
  args <- list(...)
  paste0(args, collapse = .sep)
}

glue_collapse <- function(x, sep = "", last = "") {
  if (length(x) == 0) return(character())
  paste0(x, collapse = sep)
}

default_sep <- ", "
"#;
    let chunks = chunks_of("R/glue.R", src);
    assert_defines(
        &chunks,
        &[
            ("assign", "glue_data", "glue_data <- function"),
            ("assign", "glue_collapse", "glue_collapse <- function"),
        ],
    );
    assert!(
        !chunks
            .iter()
            .any(|c| c.defines.iter().any(|d| d == "default_sep")),
        "only function assignments declare: {chunks:#?}"
    );
}

#[test]
fn kotlin_classes_objects_and_functions() {
    let src = r#"package io.ktor.client.request

class HttpRequestBuilder {
    var method: HttpMethod = HttpMethod.Get

    fun build(): HttpRequestData = HttpRequestData(method)
}

object Defaults {
    const val TIMEOUT = 30
}

suspend fun HttpClient.get(url: String): HttpResponse = request { this.url(url) }
"#;
    let chunks = chunks_of("client/request/builders.kt", src);
    assert_defines(
        &chunks,
        &[
            ("class", "HttpRequestBuilder", "class HttpRequestBuilder"),
            ("fun", "build", "fun build"),
            ("object", "Defaults", "object Defaults"),
            ("fun", "get", "suspend fun HttpClient.get"),
        ],
    );
}

#[test]
fn scala_classes_objects_traits_and_defs() {
    let src = r#"package io.circe

trait Encoder[A] {
  def apply(a: A): Json
}

final class JsonObject private (fields: Map[String, Json]) {
  def contains(key: String): Boolean = fields.contains(key)
  val size: Int = fields.size
}

object JsonObject {
  def empty: JsonObject = new JsonObject(Map.empty)
}
"#;
    let chunks = chunks_of("io/circe/JsonObject.scala", src);
    assert_defines(
        &chunks,
        &[
            ("trait", "Encoder", "trait Encoder"),
            ("def", "contains", "def contains"),
            ("class", "JsonObject", "final class JsonObject"),
            ("val", "size", "val size"),
        ],
    );
    assert!(
        chunks.iter().any(|c| c.symbol == "object JsonObject"),
        "the companion object is its own chunk: {chunks:#?}"
    );
}

#[test]
fn elixir_definitions_are_calls() {
    let src = r#"defmodule Ecto.Enum do
  @moduledoc "Maps atoms to values."

  def cast(value, params) do
    Map.fetch(params.on_cast, value)
  end

  defp validate_unique!(values) do
    if length(Enum.uniq(values)) != length(values), do: raise(ArgumentError)
  end

  defmacro values(schema, field) do
    quote do: unquote(schema).__schema__(:type, unquote(field))
  end
end
"#;
    let chunks = chunks_of("lib/ecto/enum.ex", src);
    assert_defines(
        &chunks,
        &[
            ("def", "cast", "def cast"),
            ("defp", "validate_unique", "defp validate_unique!"),
            ("defmacro", "values", "defmacro values"),
        ],
    );
    assert!(defining(&chunks, "cast")
        .symbol
        .starts_with("defmodule Enum"));
}

#[test]
fn at_least_twenty_languages_have_a_grammar() {
    let names: std::collections::BTreeSet<&str> = Language::ALL
        .iter()
        .map(|l| l.name().trim_end_matches("-interface"))
        .collect();
    assert!(names.len() >= 20, "{names:?}");
}

#[test]
fn c_functions_structs_typedefs_and_macros() {
    let src = r#"#include "uv.h"

#define UV__TCP_BACKLOG 511
#define UV__MAX(a, b) ((a) > (b) ? (a) : (b))

typedef struct uv_tcp_s uv_tcp_t;

struct uv__keepalive {
  int enable;
  unsigned int delay;
};

static int uv__tcp_keepalive(int fd, int on, unsigned int delay) {
  int err;
  struct uv__keepalive opts;
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)))
    return UV__ERR(errno);
  return 0;
}

int uv_tcp_init(uv_loop_t* loop, uv_tcp_t* tcp);
"#;
    let chunks = chunks_of("src/unix/tcp.c", src);
    assert_defines(
        &chunks,
        &[
            ("define", "UV__TCP_BACKLOG", "#define UV__TCP_BACKLOG"),
            ("macro", "UV__MAX", "#define UV__MAX(a, b)"),
            ("typedef", "uv_tcp_t", "typedef struct uv_tcp_s"),
            ("struct", "uv__keepalive", "struct uv__keepalive {"),
            (
                "function",
                "uv__tcp_keepalive",
                "static int uv__tcp_keepalive",
            ),
            ("decl", "uv_tcp_init", "int uv_tcp_init("),
        ],
    );
    // Locals of a function body name nothing, even when the body is split.
    let all: Vec<&String> = chunks.iter().flat_map(|c| &c.defines).collect();
    assert!(!all.iter().any(|d| *d == "err" || *d == "opts"), "{all:?}");
}
