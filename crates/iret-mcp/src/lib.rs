//! `iret mcp`: the engine's four questions as MCP tools over stdio.
//!
//! * `retrieve` — the evaluate-and-refine loop: files with relevance, reason, missing
//!   context and their best chunks (packed into a token budget), what each cycle learned,
//!   and what to pass back for another round;
//! * `search` — single-shot hybrid search: chunks;
//! * `find_related` — files tied to a file by imports, use, and vectors;
//! * `status` — the index and how fresh it is.
//!
//! One server serves several repositories ([`roots`]): those on its command line and the
//! client's MCP roots; each tool takes an optional `root`. Every tool answers with
//! structured JSON (and the same JSON as text). A call whose arguments are malformed, or
//! whose paths leave the served roots, gets a tool error and the server keeps serving.
//! Calls run concurrently on the blocking pool; each takes the index snapshot current
//! when it starts.
mod lenient;
pub mod roots;

use iret_engine::{
    Engine, RelatedAnswer, RelatedRequest, RetrieveAnswer, RetrieveRequest, SearchAnswer,
    SearchRequest, StatusAnswer,
};
use lenient::Lenient;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::{NotificationContext, RoleServer};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use roots::{Roots, ServedRoot};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// An MCP answer stays well under the 25k-token cap agent clients put on tool output.
pub const DEFAULT_BUDGET_TOKENS: u32 = 8000;

const INSTRUCTIONS: &str = "iret finds the files that matter for a coding task in this \
repository. Call `retrieve` with the task in plain words: it returns the few files judged \
relevant (0-1, with a reason and the concepts still missing) and their best chunks. To go \
another round with your own judgement, call it again with `next.keywords` (the codebase's \
own words it learned, plus any you know), `next.exclude` and a sharper task. `search` is a \
quick single-shot lookup (an identifier, a phrase); `find_related` lists the files tied to \
one file; `status` says how fresh the index is and lists the repositories served. Paths are \
relative to the repository root. When several repositories are served, pass `root` (a path \
to one, or to a folder inside it); without it a call goes to the first.";

/// A tool's arguments and the repository they are for.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Rooted<T> {
    /// The repository to ask: a path to it or to a folder inside it (one of those `status`
    /// lists). Default: the first served.
    #[serde(default)]
    pub root: Option<String>,
    #[serde(flatten)]
    pub request: T,
}

/// The `status` tool takes only the optional root.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct StatusArgs {
    /// The repository to describe (a path to it or inside it). Default: the first served.
    #[serde(default)]
    pub root: Option<String>,
}

/// One repository's index, and every repository the server serves.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ServedStatus {
    #[serde(flatten)]
    pub status: StatusAnswer,
    pub roots: Vec<ServedRoot>,
}

#[derive(Clone)]
pub struct IretServer {
    roots: Arc<Roots>,
    tool_router: ToolRouter<Self>,
}

/// File-backed pages (the mapped index) a server keeps resident between calls before it
/// gives them back: about what a few loop answers on a large repository read (the Linux
/// kernel's index: one `retrieve` reads some tens of MB of it).
const MAPPED_BUDGET: u64 = 200 << 20;

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
    pub fn new(roots: Arc<Roots>) -> Self {
        Self {
            roots,
            tool_router: Self::tool_router(),
        }
    }

    /// Runs `f` on the engine of `root` (opened first if need be), on the blocking pool.
    async fn on<T: Send + 'static>(
        &self,
        root: Option<String>,
        f: impl FnOnce(&Engine) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let roots = self.roots.clone();
        blocking(move || {
            let engine = roots.engine(root.as_deref())?;
            let answer = f(&engine);
            // A server lives long and queries touch many pages of the mapped index: past
            // the budget, give them back once the answer is made, so its resident memory
            // does not grow with every page earlier calls read.
            engine.release_pages_above(MAPPED_BUDGET);
            answer
        })
        .await
    }

    /// Find the files that matter for a task (evaluate-and-refine loop, up to 3 cycles).
    #[tool(
        name = "retrieve",
        description = "Find the files that matter for a coding task. Give the task in plain words (and optionally keywords, include/exclude globs). Returns the files judged relevant (relevance 0-1: 0.8+ implements the target, 0.5-0.7 related), each with a reason, the task concepts it misses and its best code chunks, packed into budget_tokens (default 8000); the terms each cycle learned, in the codebase's words; and `next` (keywords, exclude, gaps) to pass back for another round."
    )]
    async fn retrieve(
        &self,
        Parameters(args): Parameters<Lenient<Rooted<RetrieveRequest>>>,
    ) -> Result<Json<RetrieveAnswer>, String> {
        let Rooted { root, mut request } = args.into_inner()?;
        request.budget_tokens.get_or_insert(DEFAULT_BUDGET_TOKENS);
        self.on(root, move |e| e.retrieve(&request)).await.map(Json)
    }

    /// Single-shot hybrid search (vectors + BM25): chunks, best first.
    #[tool(
        name = "search",
        description = "Single-shot hybrid search (vectors + BM25 over code-aware tokens): each matching file's best chunk, best first, with its code. Good for an identifier or a phrase. Optional include/exclude globs, k (default 10) and budget_tokens (default 8000)."
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<Lenient<Rooted<SearchRequest>>>,
    ) -> Result<Json<SearchAnswer>, String> {
        let Rooted { root, mut request } = args.into_inner()?;
        request.budget_tokens.get_or_insert(DEFAULT_BUDGET_TOKENS);
        self.on(root, move |e| e.search(&request)).await.map(Json)
    }

    /// Files tied to a file: imports both ways, users of what it defines, similar code.
    #[tool(
        name = "find_related",
        description = "Files tied to one file (path relative to the root; optional line to relate just the chunk holding it): files it imports and that import it, files using what it defines, and files with the most similar code, each with its reasons. k defaults to 10."
    )]
    async fn find_related(
        &self,
        Parameters(args): Parameters<Lenient<Rooted<RelatedRequest>>>,
    ) -> Result<Json<RelatedAnswer>, String> {
        let Rooted { root, request } = args.into_inner()?;
        self.on(root, move |e| e.related(&request)).await.map(Json)
    }

    /// The index: files, chunks, stale files, model, embedded share.
    #[tool(
        name = "status",
        description = "The index of a repository (default: the first served): files, chunks, how many files changed since it was built (the next call refreshes them), the model, and the share of chunks embedded; and `roots`, every repository this server serves."
    )]
    async fn status(
        &self,
        Parameters(args): Parameters<Lenient<StatusArgs>>,
    ) -> Result<Json<ServedStatus>, String> {
        let StatusArgs { root } = args.into_inner()?;
        let status = self.on(root, |e| e.status()).await?;
        Ok(Json(ServedStatus {
            status,
            roots: self.roots.list(),
        }))
    }
}

impl IretServer {
    /// Serves the roots the client offers, when it offers them. (rmcp marks MCP roots
    /// deprecated for a future revision of the protocol, SEP-2577; clients offer them today.)
    #[allow(deprecated)]
    async fn take_client_roots(&self, context: &NotificationContext<RoleServer>) {
        let offers = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers {
            return;
        }
        match context.peer.list_roots().await {
            Ok(list) => {
                let paths = list.roots.iter().filter_map(|r| roots::uri_path(&r.uri));
                for added in self.roots.set_client_roots(paths) {
                    eprintln!("iret mcp: serving the client's root {}", added.display());
                }
            }
            Err(e) => eprintln!("iret mcp: the client's roots could not be listed: {e}"),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for IretServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("iret", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.take_client_roots(&context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.take_client_roots(&context).await;
    }
}

/// Serves `roots` over stdin/stdout until the client closes the connection.
pub fn serve_stdio(roots: Roots) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let server = IretServer::new(Arc::new(roots));
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
