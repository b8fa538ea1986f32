//! Tool arguments that keep their JSON schema but turn a malformed call (a wrong type, a
//! missing field) into a tool error the agent can read and correct, instead of a
//! protocol error.
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;

pub struct Lenient<T>(Result<T, String>);

impl<T> Lenient<T> {
    pub fn into_inner(self) -> Result<T, String> {
        self.0
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(Self(
            serde_json::from_value(value).map_err(|e| format!("bad arguments: {e}")),
        ))
    }
}

impl<T: JsonSchema> JsonSchema for Lenient<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
    fn inline_schema() -> bool {
        T::inline_schema()
    }
}
