# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_krabka_streams_global_optspecs
    string join \n b/bootstrap-server= command-config= X= client-id= request-timeout-ms= timeout= registry= schema-registry-user= schema-registry-password-file= output= v/verbose q/quiet log-format= dry-run y/yes h/help V/version
end

function __fish_krabka_streams_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_krabka_streams_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_krabka_streams_using_subcommand
    set -l cmd (__fish_krabka_streams_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "dev-cluster" -d 'Serve an embedded single-process Kafka-protocol cluster until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "snapshot" -d 'State snapshot files: list, dump, restore, verify, prune, and restore to a barrier cut'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "generate-assets" -d 'Regenerate the committed completions and man pages (used by `cargo xtask`)'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l keep-running -d 'Keep the embedded cluster and registry running after the walkthrough until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l port -d 'Port to serve on (127.0.0.1 only); 0 picks a free one' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l topic -d 'Topic to create at start, as NAME or NAME:PARTITIONS (repeatable). Others are auto-created with 4 partitions' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "list" -d 'List a directory\'s snapshot files: owner, epoch, size, entries, mtime, whether each decodes'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "dump" -d 'Print one snapshot\'s entries with their payloads decoded where the format is known'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "restore" -d 'Write a snapshot from a lossless dump, or copy one epoch\'s files to another epoch or to live state'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "verify" -d 'Decode every snapshot file of a directory; exit 3 when any is bad'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "prune" -d 'Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "restore-cut" -d 'Put an application back to a barrier cut: state snapshots become live state and the consumer group\'s offsets are set to the cut (a dry run unless --yes)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l partition -d 'Java/Go logical partition (with a directory)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l epoch -d 'Epoch number, or `live` for Java/Go live state (with a directory)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l group -d 'Rust barrier group (with a directory and --task)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l task -d 'Rust task `<subtopology>-<partition>` (with a directory and --group)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l out -d 'With --lossless: write the document to this file instead of stdout' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l lossless -d 'Write the lossless JSON document (names as hex, values as base64) that `snapshot restore --from-json` writes back byte for byte'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l from-json -d 'A lossless dump (`snapshot dump --lossless`) to write back as a container' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l to -d 'With --from-json: the file to write, or a snapshot directory (then give --epoch and --partition, or --group and --task with --layout rust)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l partition -d 'Java/Go logical partitions: one for --from-json into a directory; a list such as 0-11 or 0-3,7 for an epoch copy' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l epoch -d 'With --from-json into a directory: the epoch to write, or `live`' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l from-epoch -d 'Epoch copy: the epoch whose files are copied' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l to-epoch -d 'Epoch copy: the epoch written, or `live` to make it the live state' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l layout -d 'File naming written (D14): java-go (`partition-<p>[-epoch-<e>].snapshot`) or rust (`<group>-<task>-epoch-<e>.snapshot`, needs --group and --task)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l group -d 'Rust layout: the barrier group' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l task -d 'Rust layout: a task `<subtopology>-<partition>` (repeatable for an epoch copy)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l convert-legacy -d 'Write the dump of a legacy gen A (Java ≤ 1.2) container as gen B (names re-sorted)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l keep -d 'Keep the newest N barrier epochs of each partition or task (Java keeps 100)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l older-than -d 'Delete barrier-epoch files last modified longer ago than this (e.g. 7d, 12h)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l partition -d 'Only these Java/Go partitions (e.g. 0-11 or 0-3,7); Rust files are then left alone' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l group -d 'The barrier group whose cut to restore to' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l epoch -d 'The cut\'s epoch, or `latest` for the highest complete cut' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l snapshot-dir -d 'The application\'s snapshot directory' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l consumer-group -d 'The application\'s consumer group, whose committed offsets are set to the cut' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l layout -d 'Snapshot file layout. Only java-go has live state to restore into' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "list" -d 'List a directory\'s snapshot files: owner, epoch, size, entries, mtime, whether each decodes'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "dump" -d 'Print one snapshot\'s entries with their payloads decoded where the format is known'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "restore" -d 'Write a snapshot from a lossless dump, or copy one epoch\'s files to another epoch or to live state'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Decode every snapshot file of a directory; exit 3 when any is bad'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "restore-cut" -d 'Put an application back to a barrier cut: state snapshots become live state and the consumer group\'s offsets are set to the cut (a dry run unless --yes)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l root -d 'Repository root to write `completions/` and `man/` into' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand generate-assets" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster snapshot completions generate-assets help" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster snapshot completions generate-assets help" -f -a "dev-cluster" -d 'Serve an embedded single-process Kafka-protocol cluster until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster snapshot completions generate-assets help" -f -a "snapshot" -d 'State snapshot files: list, dump, restore, verify, prune, and restore to a barrier cut'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster snapshot completions generate-assets help" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster snapshot completions generate-assets help" -f -a "generate-assets" -d 'Regenerate the committed completions and man pages (used by `cargo xtask`)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster snapshot completions generate-assets help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "list" -d 'List a directory\'s snapshot files: owner, epoch, size, entries, mtime, whether each decodes'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "dump" -d 'Print one snapshot\'s entries with their payloads decoded where the format is known'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "restore" -d 'Write a snapshot from a lossless dump, or copy one epoch\'s files to another epoch or to live state'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "verify" -d 'Decode every snapshot file of a directory; exit 3 when any is bad'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "prune" -d 'Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "restore-cut" -d 'Put an application back to a barrier cut: state snapshots become live state and the consumer group\'s offsets are set to the cut (a dry run unless --yes)'
