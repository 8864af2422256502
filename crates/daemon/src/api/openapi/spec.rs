//! The builder of the OpenAPI document: operations with their parameters, bodies and
//! answers, the schemas they name collected by one generator, and the errors every
//! operation of a kind can answer.

use super::{SESSION, SESSIONS, TASK, TASKS};
use orchestra_proto::wire::ErrorBody;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

/// The document being built: the generator collects every schema the operations name.
pub(super) struct Spec {
    generator: SchemaGenerator,
    paths: Map<String, Value>,
}

/// One operation, added to its path by [`OpBuilder::add`].
pub(super) struct OpBuilder<'a> {
    spec: &'a mut Spec,
    method: &'static str,
    path: String,
    op: Map<String, Value>,
    params: Vec<Value>,
    responses: Vec<(u16, Value)>,
    has_body: bool,
}

impl Spec {
    pub(super) fn new() -> Spec {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.definitions_path = "#/components/schemas/".into();
            s.meta_schema = None;
        });
        Spec {
            generator: settings.into_generator(),
            paths: Map::new(),
        }
    }

    pub(super) fn op(
        &mut self,
        method: &'static str,
        path: &str,
        id: &str,
        summary: &str,
    ) -> OpBuilder<'_> {
        let mut op = Map::new();
        op.insert("operationId".into(), id.into());
        op.insert("summary".into(), summary.into());
        let mut params = Vec::new();
        if path.contains("{id}") {
            params.push(json!({
                "name": "id", "in": "path", "required": true,
                "description": "The id (opaque string) of the task or session.",
                "schema": {"type": "string"},
            }));
        }
        OpBuilder {
            spec: self,
            method,
            path: path.to_string(),
            op,
            params,
            responses: Vec::new(),
            has_body: false,
        }
    }

    /// Links from the answers that create a task or a session to every operation on one:
    /// what a client (and Schemathesis's stateful phase) follows to reach real resources.
    fn link_created(&mut self) {
        let by_id: Vec<(String, String)> = self
            .paths
            .iter()
            .filter(|(path, _)| path.contains("{id}"))
            .flat_map(|(path, item)| {
                item.as_object()
                    .into_iter()
                    .flat_map(|ops| ops.values())
                    .filter_map(|op| op["operationId"].as_str())
                    .map(|id| (path.clone(), id.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let creators = [
            (TASKS, "post", "201", "$response.body#/task/id"),
            (
                &*format!("{TASK}/retry"),
                "post",
                "201",
                "$response.body#/task/id",
            ),
            (SESSIONS, "post", "201", "$response.body#/sessionId"),
        ];
        for (path, method, status, id) in creators {
            let prefix = if path.starts_with(TASKS) {
                TASK
            } else {
                SESSION
            };
            let links: Map<String, Value> = by_id
                .iter()
                .filter(|(p, _)| p.starts_with(prefix))
                .map(|(_, op)| {
                    (
                        op.clone(),
                        json!({"operationId": op, "parameters": {"id": id}}),
                    )
                })
                .collect();
            if let Some(response) = self
                .paths
                .get_mut(path)
                .and_then(|item| item.get_mut(method))
                .and_then(|op| op["responses"].get_mut(status))
                .and_then(Value::as_object_mut)
            {
                response.insert("links".into(), Value::Object(links));
            }
        }
    }

    pub(super) fn finish(mut self) -> Value {
        self.link_created();
        let mut schemas = self.generator.take_definitions(true);
        schemas.sort_keys();
        json!({
            "openapi": "3.1.0",
            "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
            "info": {
                "title": "orchestra",
                "version": crate::api::VERSION,
                "description": "The HTTP API of orchestra, a cockpit for coding agents: tasks, sessions (subagents in their own terminals), the orchestrator, its events. JSON in and out; every error is `{\"error\": \"<sentence>\"}` with its status. Requests whose Host is not a loopback name are refused (403) unless allowed with --allow-host. Every request needs `Authorization: Bearer <token>` (401 without): the owner's token (`orchestra token` prints it; --token / ORCHESTRA_TOKEN choose another), or an agent session's own credential (its ORCHESTRA_TOKEN), which reaches only that session and its task (403 elsewhere). Only an orchestra started with --insecure-no-auth asks for no token. A known path with another method answers 405 with `Allow`; an unknown path 404. Generated from orchestra's wire types (`orchestra openapi`).",
                "license": {"name": "MIT", "identifier": "MIT"},
            },
            // Relative: the orchestra that serves the document (`orchestra serve` prints its URL).
            "servers": [{"url": "/"}],
            "tags": [
                {"name": "tasks", "description": "Units of work with a lifecycle."},
                {"name": "sessions", "description": "Live child processes in their own terminals."},
                {"name": "worktrees", "description": "Tasks isolated in git worktrees."},
                {"name": "trust", "description": "Repository files whose commands the user trusted."},
                {"name": "orchestrator", "description": "State, providers, events, the autopilot."},
            ],
            "security": [{"bearer": []}],
            "paths": self.paths,
            "components": {
                "schemas": schemas,
                "securitySchemes": {"bearer": {
                    "type": "http", "scheme": "bearer",
                    "description": "The owner's token (`orchestra token`), or an agent session's credential. Not required only by an orchestra started with --insecure-no-auth.",
                }},
            },
        })
    }
}

impl OpBuilder<'_> {
    pub(super) fn tag(mut self, tag: &str) -> Self {
        self.op.insert("tags".into(), json!([tag]));
        self
    }

    pub(super) fn describe(mut self, text: &str) -> Self {
        self.op.insert("description".into(), text.into());
        self
    }

    /// An `x-` extension whose value names schemas of the document.
    pub(super) fn extension_with(
        mut self,
        key: &str,
        value: impl FnOnce(&mut SchemaGenerator) -> Value,
    ) -> Self {
        let value = value(&mut self.spec.generator);
        self.op.insert(key.into(), value);
        self
    }

    /// A query parameter whose values are `T`'s.
    pub(super) fn query_of<T: JsonSchema>(self, name: &str, description: &str) -> Self {
        let schema = self.spec.generator.subschema_for::<T>().to_value();
        self.query(name, schema, description)
    }

    pub(super) fn query(mut self, name: &str, schema: Value, description: &str) -> Self {
        self.params.push(json!({
            "name": name, "in": "query", "required": false,
            "description": description, "schema": schema,
        }));
        self
    }

    pub(super) fn path_param(mut self, name: &str, description: &str) -> Self {
        self.params.push(json!({
            "name": name, "in": "path", "required": true,
            "description": description, "schema": {"type": "string"},
        }));
        self
    }

    pub(super) fn header_param(mut self, name: &str, description: &str) -> Self {
        self.params.push(json!({
            "name": name, "in": "header", "required": true,
            "description": description, "schema": {"type": "string"},
        }));
        self
    }

    /// The request body, as the type `T` a client sends. The server reads bodies field by
    /// field and takes a `null` field as absent, so every optional field may be `null`.
    pub(super) fn body<T: JsonSchema>(self) -> Self {
        let schema = request_schema::<T>(&mut self.spec.generator);
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        self.body_schema(schema, required)
    }

    /// A body of optional fields of which at least one must be given (not `null`).
    pub(super) fn body_at_least_one<T: JsonSchema>(self) -> Self {
        let mut schema = request_schema::<T>(&mut self.spec.generator);
        let fields: Vec<String> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let one_of_them: Vec<Value> = fields
            .iter()
            .map(|f| json!({"required": [f], "properties": {f: {"not": {"type": "null"}}}}))
            .collect();
        if let Some(o) = schema.as_object_mut() {
            o.insert("anyOf".into(), Value::Array(one_of_them));
        }
        self.body_schema(schema, true)
    }

    /// An example body, as the wire type encodes it.
    pub(super) fn example<T: serde::Serialize>(mut self, value: &T) -> Self {
        if let (Ok(example), Some(media)) = (
            serde_json::to_value(value),
            self.op
                .get_mut("requestBody")
                .map(|b| &mut b["content"]["application/json"]),
        ) {
            media["example"] = example;
        }
        self
    }

    pub(super) fn body_schema(mut self, schema: Value, required: bool) -> Self {
        self.op.insert(
            "requestBody".into(),
            json!({"required": required, "content": {"application/json": {"schema": schema}}}),
        );
        self.has_body = true;
        self
    }

    /// The success answer: `T` as JSON.
    pub(super) fn answer<T: JsonSchema>(self, status: u16, description: &str) -> Self {
        let schema = self.spec.generator.subschema_for::<T>().to_value();
        self.raw_answer(
            status,
            json!({"description": description,
                "content": {"application/json": {"schema": schema}}}),
        )
    }

    pub(super) fn raw_answer(mut self, status: u16, response: Value) -> Self {
        self.responses.push((status, response));
        self
    }

    /// An error status and what it means here (the body is always [`ErrorBody`]).
    pub(super) fn error(mut self, status: u16, description: &str) -> Self {
        let schema = self.spec.generator.subschema_for::<ErrorBody>().to_value();
        let response = json!({"description": description,
            "content": {"application/json": {"schema": schema}}});
        match self.responses.iter_mut().find(|(s, _)| *s == status) {
            Some(existing) => existing.1 = response,
            None => self.responses.push((status, response)),
        }
        self
    }

    /// The errors every operation of its kind can answer, unless it said more precisely.
    fn common_errors(mut self) -> Self {
        let said = |s: &Self, status: u16| s.responses.iter().any(|(st, _)| *st == status);
        if !said(&self, 401) {
            self = self.error(
                401,
                "No bearer token, or one that opens nothing (see `orchestra token`); an agent session's credential that has ended.",
            );
        }
        if !said(&self, 403) {
            self = self.error(403, "The Host is not a loopback name (nor allowed with --allow-host), a web page of another site sent the request, or an agent session's credential asked for something beyond its own task and session.");
        }
        if self.path.contains("{id}") && !said(&self, 404) {
            let what = if self.path.starts_with(TASKS) {
                "task"
            } else {
                "session"
            };
            self = self.error(404, &format!("No {what} with this id."));
        }
        if self.has_body {
            if !said(&self, 400) {
                self = self.error(
                    400,
                    "The body is not a JSON object, or a field is missing or of the wrong type.",
                );
            }
            self = self.error(413, "The body is larger than 1 MiB.");
        } else if !said(&self, 400) && !self.params.iter().all(|p| p["in"] == "path") {
            self = self.error(400, "A query value that is not valid.");
        }
        self
    }

    pub(super) fn add(self) {
        let mut this = self.common_errors();
        let mut responses = std::mem::take(&mut this.responses);
        responses.sort_by_key(|(s, _)| *s);
        let responses: Map<String, Value> = responses
            .into_iter()
            .map(|(s, r)| (s.to_string(), r))
            .collect();
        let mut op = this.op;
        if !this.params.is_empty() {
            op.insert("parameters".into(), Value::Array(this.params));
        }
        op.insert("responses".into(), Value::Object(responses));
        let item = this
            .spec
            .paths
            .entry(this.path)
            .or_insert_with(|| json!({}));
        if let Some(item) = item.as_object_mut() {
            item.insert(this.method.into(), Value::Object(op));
        }
    }
}

/// `T`'s schema inlined as a request body, each optional field also allowing `null`.
fn request_schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    let mut schema = T::json_schema(generator).to_value();
    let Some(object) = schema.as_object_mut() else {
        return schema;
    };
    object.remove("title");
    let required: Vec<Value> = object
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(props) = object.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, prop) in props.iter_mut() {
            if !required.contains(&Value::String(name.clone())) {
                *prop = nullable(prop.take());
            }
        }
    }
    schema
}

/// A property schema that also allows `null` (once).
fn nullable(schema: Value) -> Value {
    let allows_null = |s: &Value| match s.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => false,
    };
    if allows_null(&schema)
        || schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(allows_null))
    {
        return schema;
    }
    match schema.get("type").cloned() {
        Some(Value::String(t)) if schema.get("enum").is_none() => {
            let mut s = schema;
            s["type"] = json!([t, "null"]);
            s
        }
        _ => json!({"anyOf": [schema, {"type": "null"}]}),
    }
}
