//! `__barrier_state` cut manifests, barrier markers and the cut reader fold.
