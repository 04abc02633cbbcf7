"""T11: context assembly with layered compression, and caller-written versioned summaries."""
