//! `iret mcp`: the engine's four questions as MCP tools over stdio.
//!
//! * `retrieve` — the evaluate-and-refine loop: files with relevance, reason, missing
//!   context and their best chunks (packed into a token budget), what each cycle learned,
//!   and what to pass back for another round;
//! * `search` — single-shot hybrid search: chunks;
//! * `find_related` — files tied to a file by imports, use, and vectors;
//! * `status` — the index and how fresh it is.
//!
//! Every tool answers with structured JSON (and the same JSON as text). A call whose
//! arguments are malformed, or whose paths leave the root, gets a tool error and the
//! server keeps serving. Calls run concurrently on the blocking pool; each takes the
//! index snapshot current when it starts.
mod lenient;

use iret_engine::{
    Engine, RelatedAnswer, RelatedRequest, RetrieveAnswer, RetrieveRequest, SearchAnswer,
    SearchRequest, StatusAnswer,
};
use lenient::Lenient;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// An MCP answer stays well under the 25k-token cap agent clients put on tool output.
pub const DEFAULT_BUDGET_TOKENS: u32 = 8000;

const INSTRUCTIONS: &str = "iret finds the files that matter for a coding task in this \
repository. Call `retrieve` with the task in plain words: it returns the few files judged \
relevant (0-1, with a reason and the concepts still missing) and their best chunks. To go \
another round with your own judgement, call it again with `next.keywords` (the codebase's \
own words it learned, plus any you know), `next.exclude` and a sharper task. `search` is a \
quick single-shot lookup (an identifier, a phrase); `find_related` lists the files tied to \
one file; `status` says how fresh the index is. Paths are relative to the repository root.";

/// The `status` tool takes no arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Clone)]
pub struct IretServer {
    engine: Arc<Engine>,
    tool_router: ToolRouter<Self>,
}

/// Runs `f` on the blocking pool (retrieval is CPU work) and turns errors into tool errors.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, String> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(e) => Err(format!("internal error: {e}")),
    }
}

#[tool_router(router = tool_router)]
impl IretServer {
    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            tool_router: Self::tool_router(),
        }
    }

    /// Find the files that matter for a task (evaluate-and-refine loop, up to 3 cycles).
    #[tool(
        name = "retrieve",
        description = "Find the files that matter for a coding task. Give the task in plain words (and optionally keywords, include/exclude globs). Returns the files judged relevant (relevance 0-1: 0.8+ implements the target, 0.5-0.7 related), each with a reason, the task concepts it misses and its best code chunks, packed into budget_tokens (default 8000); the terms each cycle learned, in the codebase's words; and `next` (keywords, exclude, gaps) to pass back for another round."
    )]
    async fn retrieve(
        &self,
        Parameters(args): Parameters<Lenient<RetrieveRequest>>,
    ) -> Result<Json<RetrieveAnswer>, String> {
        let mut req = args.into_inner()?;
        req.budget_tokens.get_or_insert(DEFAULT_BUDGET_TOKENS);
        let engine = self.engine.clone();
        blocking(move || engine.retrieve(&req)).await.map(Json)
    }

    /// Single-shot hybrid search (vectors + BM25): chunks, best first.
    #[tool(
        name = "search",
        description = "Single-shot hybrid search (vectors + BM25 over code-aware tokens): each matching file's best chunk, best first, with its code. Good for an identifier or a phrase. Optional include/exclude globs, k (default 10) and budget_tokens (default 8000)."
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<Lenient<SearchRequest>>,
    ) -> Result<Json<SearchAnswer>, String> {
        let mut req = args.into_inner()?;
        req.budget_tokens.get_or_insert(DEFAULT_BUDGET_TOKENS);
        let engine = self.engine.clone();
        blocking(move || engine.search(&req)).await.map(Json)
    }

    /// Files tied to a file: imports both ways, users of what it defines, similar code.
    #[tool(
        name = "find_related",
        description = "Files tied to one file (path relative to the root; optional line to relate just the chunk holding it): files it imports and that import it, files using what it defines, and files with the most similar code, each with its reasons. k defaults to 10."
    )]
    async fn find_related(
        &self,
        Parameters(args): Parameters<Lenient<RelatedRequest>>,
    ) -> Result<Json<RelatedAnswer>, String> {
        let req = args.into_inner()?;
        let engine = self.engine.clone();
        blocking(move || engine.related(&req)).await.map(Json)
    }

    /// The index: files, chunks, stale files, model, embedded share.
    #[tool(
        name = "status",
        description = "The index of this repository: files, chunks, how many files changed since it was built (the next call refreshes them), the model, and the share of chunks embedded."
    )]
    async fn status(
        &self,
        Parameters(_): Parameters<Lenient<NoArgs>>,
    ) -> Result<Json<StatusAnswer>, String> {
        let engine = self.engine.clone();
        blocking(move || engine.status()).await.map(Json)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for IretServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("iret", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Serves `engine` over stdin/stdout until the client closes the connection.
pub fn serve_stdio(engine: Engine) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let server = IretServer::new(Arc::new(engine));
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("MCP handshake failed: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("MCP server stopped: {e}"))?;
        Ok(())
    })
}
