"""Writes the install root: staging, manifests, markers, wrappers, the current switch, prune."""
