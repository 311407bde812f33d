//! End-to-end tests of the product against real servers: a Tansu broker started per test
//! (see `support::tansu`) and the in-repo schema registry. `scripts/test` prepares the
//! Tansu binary on a fresh machine.

mod support;

mod broker;
mod tail;
