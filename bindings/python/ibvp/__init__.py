"""ibvp: Python side of the InfiniBand virtual platform (results, plots)."""
