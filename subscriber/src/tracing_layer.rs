//! Turning the UR tracing layer on (`UR_ENABLE_LAYERS=UR_LAYER_TRACING`)
//! before the runtime initialises Unified Runtime, so that UR calls arrive
//! on `ur.call.debug` ([`crate::ur_calls`]) until the hooks take over.

use std::sync::atomic::Ordering;

use crate::counters::Counters;

/// Why the UR tracing layer is or is not on.
#[derive(Debug, PartialEq, Eq)]
pub enum LayerState {
    /// The user (or an earlier tool) already asked for it.
    AlreadyOn,
    /// We set `UR_ENABLE_LAYERS` ourselves.
    TurnedOn,
    /// Not set, and setting it was not safe (other threads were running).
    Off(String),
}

/// Makes sure `UR_ENABLE_LAYERS` names `UR_LAYER_TRACING` before the runtime
/// initialises Unified Runtime.
///
/// The environment is changed without `setenv` ([`crate::environment`]).
pub fn enable_tracing_layer(counters: &Counters) -> LayerState {
    const NAME: &str = "UR_ENABLE_LAYERS";
    const LAYER: &str = "UR_LAYER_TRACING";
    let current = std::env::var_os(NAME).map(|v| v.to_string_lossy().into_owned());
    let Some(value) = layers_with(current.as_deref(), LAYER) else {
        return LayerState::AlreadyOn;
    };
    if current.as_deref().is_some_and(|c| !c.trim().is_empty()) {
        counters.other_ur_layers.store(true, Ordering::Relaxed);
    }
    let Ok(entry) = std::ffi::CString::new(format!("{NAME}={value}")) else {
        return LayerState::Off("UR_ENABLE_LAYERS holds a NUL byte".into());
    };
    crate::environment::publish(&[(NAME, Some(entry))]);
    if std::env::var(NAME).is_ok_and(|v| v == value) {
        counters
            .tracing_layer_turned_on
            .store(true, Ordering::Relaxed);
        LayerState::TurnedOn
    } else {
        LayerState::Off(
            "the environment could not be changed; set UR_ENABLE_LAYERS=UR_LAYER_TRACING for \
             forced profiling, direct USM timing and depends_on edges"
                .into(),
        )
    }
}

/// The value of `UR_ENABLE_LAYERS` with `layer` added to `current`, or
/// `None` when `current` names it already. The runtime splits the list at
/// commas only: a `;` made one unknown name of the whole value, and the
/// runtime's start-up then failed and spun for good (untraced too).
fn layers_with(current: Option<&str>, layer: &str) -> Option<String> {
    match current.map(str::trim) {
        Some(current) if current.split(',').any(|l| l.trim() == layer) => None,
        Some(current) if !current.is_empty() => Some(format!("{current},{layer}")),
        _ => Some(layer.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tracing_layer_is_added_with_a_comma() {
        let layer = "UR_LAYER_TRACING";
        assert_eq!(super::layers_with(None, layer).as_deref(), Some(layer));
        assert_eq!(super::layers_with(Some(" "), layer).as_deref(), Some(layer));
        assert_eq!(
            super::layers_with(Some("UR_LAYER_FULL_VALIDATION"), layer).as_deref(),
            Some("UR_LAYER_FULL_VALIDATION,UR_LAYER_TRACING")
        );
        assert_eq!(super::layers_with(Some("A, UR_LAYER_TRACING"), layer), None);
    }
}
