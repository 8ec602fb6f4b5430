//! The tools of a session by name: the toolbox of both drivers, generic over the driver's
//! tool trait.
//!
//! A driver makes its toolbox in three lines: `pub type Toolbox = Registry<dyn Tool>;`,
//! [`ToolObject`] for `dyn Tool` (where the spec comes from), and
//! `From<T: Tool> for Box<dyn Tool>` (so that [`Registry::add`] takes tools by value).

use super::ToolSpec;
use std::fmt;
use std::sync::Arc;

/// A driver's tool trait object as the registry sees it: something with a spec.
///
/// Implemented by each driver for its `dyn Tool`; the method has its own name so that it never
/// competes with the driver trait's `spec` at a call site.
pub trait ToolObject {
    /// The spec of this tool, taken once when it is added.
    fn tool_spec(&self) -> ToolSpec;
}

/// Tools looked up by name, each kept with its spec (taken once, when it is added). `T` is a
/// driver's tool trait object, such as `dyn Tool`. Cheap to clone: tools are shared.
pub struct Registry<T: ?Sized> {
    entries: Vec<(ToolSpec, Arc<T>)>,
}

impl<T: ?Sized> Registry<T> {
    /// An empty registry.
    pub fn new() -> Self {
        Registry {
            entries: Vec::new(),
        }
    }

    /// Adds `tool` under `spec.name`; a tool of the same name is replaced in its place.
    pub fn insert(&mut self, spec: ToolSpec, tool: Arc<T>) {
        match self.entries.iter_mut().find(|(s, _)| s.name == spec.name) {
            Some(entry) => *entry = (spec, tool),
            None => self.entries.push((spec, tool)),
        }
    }

    /// Keeps only the tools whose names `keep` accepts (an agent's tool filter).
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|(spec, _)| keep(&spec.name));
    }

    /// The specs of all tools in the order they were added, for the session config.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|(spec, _)| spec.clone()).collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<T>> {
        self.entries
            .iter()
            .find(|(spec, _)| spec.name == name)
            .map(|(_, tool)| tool)
    }

    /// The names of all tools, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(spec, _)| spec.name.as_str())
    }
}

impl<T: ?Sized + ToolObject> Registry<T> {
    /// Adds a tool by value; a tool of the same name is replaced in its place.
    pub fn add(&mut self, tool: impl Into<Box<T>>) -> &mut Self {
        self.add_arc(Arc::from(tool.into()))
    }

    /// Adds a shared tool; a tool of the same name is replaced in its place.
    pub fn add_arc(&mut self, tool: Arc<T>) -> &mut Self {
        self.insert(tool.tool_spec(), tool);
        self
    }
}

impl<T: ?Sized> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ?Sized> Clone for Registry<T> {
    fn clone(&self) -> Self {
        Registry {
            entries: self.entries.clone(),
        }
    }
}

impl<T: ?Sized> fmt::Debug for Registry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Effect;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({"type": "object"}),
            effect: Effect::ReadOnly,
        }
    }

    #[test]
    fn insert_replaces_by_name_in_place_and_retain_filters() {
        let mut r: Registry<str> = Registry::new();
        r.insert(spec("a", "first"), Arc::from("tool a"));
        r.insert(spec("b", "second"), Arc::from("tool b"));
        r.insert(spec("a", "replaced"), Arc::from("tool a2"));
        assert_eq!(r.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(r.specs()[0].description, "replaced");
        assert_eq!(r.get("a").map(|t| &**t), Some("tool a2"));
        assert!(r.get("c").is_none());
        let copy = r.clone();
        r.retain(|name| name != "a");
        assert_eq!(format!("{r:?}"), r#"["b"]"#);
        assert_eq!(copy.names().count(), 2);
    }

    trait Named {
        fn name(&self) -> &'static str;
    }

    impl ToolObject for dyn Named {
        fn tool_spec(&self) -> ToolSpec {
            spec(self.name(), "named")
        }
    }

    struct Fixed(&'static str);

    impl Named for Fixed {
        fn name(&self) -> &'static str {
            self.0
        }
    }

    impl From<Fixed> for Box<dyn Named> {
        fn from(tool: Fixed) -> Self {
            Box::new(tool)
        }
    }

    #[test]
    fn add_takes_the_spec_from_the_tool() {
        let mut r: Registry<dyn Named> = Registry::new();
        r.add(Fixed("x"))
            .add(Fixed("y"))
            .add_arc(Arc::new(Fixed("x")));
        assert_eq!(r.names().collect::<Vec<_>>(), ["x", "y"]);
        assert_eq!(r.get("y").map(|t| t.name()), Some("y"));
    }
}
