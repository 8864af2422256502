//! `GET /api/coding-agents/providers`: the agent CLIs orchestra knows and which are here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One provider as this machine has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    pub id: String,
    pub name: String,
    pub command: String,
    pub installed: bool,
    /// How to install it.
    pub install: String,
    /// Where its executable is; `null` when it is not installed.
    pub path: Option<String>,
    /// What it says its version is, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub coding_agent: bool,
    /// Whether a task for it needs a description (its first instruction).
    pub needs_description: bool,
    /// Whether sessions without a provider get this one.
    pub default: bool,
}

/// `{providers}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderList {
    pub providers: Vec<ProviderInfo>,
}

impl ProviderList {
    /// The id of the default provider, if any.
    pub fn default_id(&self) -> Option<&str> {
        self.providers
            .iter()
            .find(|p| p.default)
            .map(|p| p.id.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testing::round_trip;
    use serde_json::json;

    #[test]
    fn providers_encode_as_documented() {
        let list = ProviderList {
            providers: vec![
                ProviderInfo {
                    id: "shell".into(),
                    name: "Shell".into(),
                    command: "$SHELL".into(),
                    installed: true,
                    install: "apt-get install bash".into(),
                    path: Some("/bin/bash".into()),
                    version: Some("5.2".into()),
                    coding_agent: false,
                    needs_description: false,
                    default: false,
                },
                ProviderInfo {
                    id: "claude".into(),
                    name: "Claude Code".into(),
                    command: "claude".into(),
                    installed: false,
                    install: "npm install -g @anthropic-ai/claude-code".into(),
                    path: None,
                    version: None,
                    coding_agent: true,
                    needs_description: true,
                    default: true,
                },
            ],
        };
        round_trip(
            &list,
            json!({"providers": [
                {"id": "shell", "name": "Shell", "command": "$SHELL", "installed": true,
                 "install": "apt-get install bash", "path": "/bin/bash", "version": "5.2",
                 "codingAgent": false, "needsDescription": false, "default": false},
                {"id": "claude", "name": "Claude Code", "command": "claude", "installed": false,
                 "install": "npm install -g @anthropic-ai/claude-code", "path": null,
                 "codingAgent": true, "needsDescription": true, "default": true}]}),
        );
        assert_eq!(list.default_id(), Some("claude"));
    }
}
