"""The built-in offline demo model (`model.DemoChatModel`) and its logic: routing messages to
tools and summarising results. agent.graph.build_model is the one place that chooses it (when
LLM_API_BASE is unset); nothing else in the agent knows it is there."""
