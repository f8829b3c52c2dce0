"""RadA-BenchPlat: a simulated radiology tool environment that benchmarks an LLM
as the core of a tool-using agent -- planning a tool chain, choosing the best tool among
distractors, passing inputs and outputs, synthesizing the answer, and recognizing when
the tools at hand cannot solve the task. See docs/radbench.md.
"""
