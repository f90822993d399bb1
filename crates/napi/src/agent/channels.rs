//! The JS model's request channels (`archmax_machine::model::delta`) as `agent.js` keeps its
//! side of them: the blocks deltas name, and the channels a session leaves between turns.

use napi_derive::napi;

use super::NativeAgent;

#[napi]
impl NativeAgent {
    /// The JSON text of request block `id` (a system message or a tool list that request
    /// deltas name, `archmax_machine::model::delta`), for `agent.js` to keep once for every
    /// channel; `null` once it is forgotten (the JS side then refuses the delta). Never fails.
    #[napi(catch_unwind)]
    pub fn model_block(&self, id: i64) -> Option<String> {
        let js = self.js_model.read().ok().and_then(|g| g.clone())?;
        let channels = js.channels()?;
        channels
            .block(u64::try_from(id).ok()?)
            .map(|b| b.to_string())
    }

    /// Releases what this agent keeps for `session_id` and its child sessions between
    /// turns: the idle request channels (conversation copies) of the JS model. Returns their
    /// ids, for `agent.js` to forget its side. Idempotent; never fails.
    #[napi(catch_unwind)]
    pub fn dispose_session(&self, session_id: String) -> Vec<u32> {
        let Some(js) = self.js_model.read().ok().and_then(|g| g.clone()) else {
            return Vec::new();
        };
        let Some(mut channels) = js.channels() else {
            return Vec::new();
        };
        channels
            .forget_session(&session_id)
            .into_iter()
            .filter_map(|id| u32::try_from(id).ok())
            .collect()
    }
}
