//! The MCP server: rmcp's handler answering `tools/list` and `tools/call` from the catalog.
//! Tool calls run concurrently (rmcp hands each request its own task), so a model can wait
//! on one task and look at another at the same time.

use crate::tools::{self, Ctx};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;

const INSTRUCTIONS: &str = "orchestra runs coding agents (Claude Code, Codex, Gemini CLI, OpenCode, Aider, shells) as tasks, each in its own terminal and, in a git repository, its own worktree, under a person's eye. To hand work to another agent: create_task (start: true), then wait_for_task until it finishes or asks something, read its result (and task_diff for a worktree task), then merge_task or discard_task. Errors are orchestra's own sentences with what to do next.";

#[derive(Clone)]
pub struct Server {
    ctx: Arc<Ctx>,
    tools: Arc<Vec<Tool>>,
}

impl Server {
    pub fn new(ctx: Ctx) -> Server {
        Server {
            ctx: Arc::new(ctx),
            tools: Arc::new(tools::catalog::all()),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("orchestra", env!("CARGO_PKG_VERSION")).with_title("orchestra"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match tools::call(&self.ctx, &request.name, request.arguments, &context).await {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("there is no tool {:?}; tools/list names them", request.name),
                None,
            )),
        }
    }
}
