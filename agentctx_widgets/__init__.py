"""agentctx-widgets: build, watch and regression-test LLM agent hooks in Jupyter."""
