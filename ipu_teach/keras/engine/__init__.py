"""The machinery behind Model: graph, data, training loops, summary, saving, device placement."""
