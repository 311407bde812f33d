//! Subcommands: argument structs, translation to engine calls, output rendering.
