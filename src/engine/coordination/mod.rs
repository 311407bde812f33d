//! Leader election over `__coordination_state`: records, fencing tokens, leases and succession.
//! Standard library only.
