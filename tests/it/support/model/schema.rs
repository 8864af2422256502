//! A JSON value that satisfies a (simple) JSON schema: the answer to side requests that want
//! structured output (claude's session title, gemini's model router and next-speaker check).

use serde_json::{Map, Value, json};

/// Strings: the first enum value, else "scripted"; numbers: the minimum, else 1; objects:
/// every property. Enough for the schemas the CLIs send; not a general generator.
pub fn value_for(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let ty = schema["type"]
        .as_str()
        .map(str::to_ascii_lowercase)
        .or_else(|| {
            schema["type"]
                .as_array()
                .and_then(|t| t.first())
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase)
        })
        .unwrap_or_else(|| {
            if schema["properties"].is_object() {
                "object".into()
            } else {
                "string".into()
            }
        });
    match ty.as_str() {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (k, s) in props {
                    out.insert(k.clone(), value_for(s));
                }
            }
            Value::Object(out)
        }
        "array" => json!([]),
        "integer" | "number" => schema["minimum"].as_f64().map_or(json!(1), |m| {
            let m = m
                .max(1.0)
                .min(schema["maximum"].as_f64().unwrap_or(f64::MAX));
            if ty == "integer" {
                json!(m as i64)
            } else {
                json!(m)
            }
        }),
        "boolean" => json!(false),
        _ => json!("scripted"),
    }
}
