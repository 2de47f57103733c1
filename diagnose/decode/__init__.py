"""The decode engine and its backends, below both stages: many rows of one or several prompts
decoded in one batched pass (shared-prefix attention, exact or refused per model family), the
logits pipeline, and the backends that run a model here or on an OpenAI-compatible server.
The input stage's read tier and the sampling stage both decode through it."""
