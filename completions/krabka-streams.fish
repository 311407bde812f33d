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
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "run" -d 'Run a topology file: validate it (--check), print its graph (--explain), run it as a consumer group (-b), or offline over Arrow IPC (--input)'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "dev-cluster" -d 'Serve an embedded Kafka-protocol cluster and schema registry until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "barrier" -d 'Barrier cuts in __barrier_state: list, show, watch, verify, decode'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "schema" -d 'Schema registry: prewarm subjects, inspect schemas, decode frames, check compatibility'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "leader" -d 'Run or inspect leader elections fenced by the producer epoch'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "snapshot" -d 'State snapshot files: list, dump, restore, verify, prune, and restore to a barrier cut'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "tail" -d 'Read topics as Arrow record batches: Arrow IPC, Parquet, NDJSON or a table'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "produce" -d 'Write rows of Arrow IPC, Parquet or NDJSON (or plain lines, as kcat -P) to a topic'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l input -d 'Run offline: read an Arrow IPC stream or file (`-` = stdin) into a source, named by node or topic. Repeatable' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l sink -d 'Offline: write a sink\'s batches to PATH, named by node or topic: `.arrows` IPC stream, `.arrow` IPC file, `.parquet` Parquet, `-` stdout (stream). Repeatable' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l dead-letter -d 'Offline with `error_policy: dead-letter`: write the failed input rows (with the krabka.error.* headers) to PATH' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l threads -d 'Threads one batch may be worked on (default: the available cores): `run` offline splits filters, derived columns, group-bys and joins over them, `run` and `tail` encode Parquet columns on them. The output is byte-identical at every count; 1 is the one-thread path' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l metrics-interval -d 'Print the metrics so far on stderr at this interval (e.g. 5s)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l restore-cut -d 'Online with a barrier group: start from a complete cut (an epoch or `latest`): each partition\'s state from the cut\'s epoch snapshots, the consumer group\'s offsets set to the cut offsets. The group must have no members' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l schema-cache -d 'Schema cache file written by `schema prewarm --write-cache`: its ids need no registry round trip' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l check -d 'Validate the file (names, parents, codecs, expressions against the declared or input schemas) and exit; 3 when invalid'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l explain -d 'Print the node graph with each node\'s columns and exit'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l adopt-state -d 'Online: load the state store\'s snapshots even though they belong to another consumer group or topology (or record no owner), and record this run as their owner. Without it such state is refused, nothing processed, exit 1'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -l keep-running -d 'Keep the embedded cluster and registry running after the walkthrough until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand demo" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l port -d 'Kafka port to serve on (127.0.0.1 only); 0 picks a free one' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l registry-port -d 'Schema registry port (127.0.0.1 only); 0 picks a free one [default: 8081, or a free one when 8081 is taken]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l topic -d 'Topic to create at start, as NAME or NAME:PARTITIONS (repeatable). Others are auto-created with 4 partitions' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand dev-cluster" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -f -a "list" -d 'List barrier groups and their cuts (complete cuts only unless --all)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -f -a "show" -d 'Show one cut in full: every topic, partition and offset'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -f -a "watch" -d 'Print each new cut of a group as it is published, until Ctrl-C or --count'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -f -a "verify" -d 'Check a cut against committed offsets, snapshot files and/or an Arrow input'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -f -a "decode" -d 'Decode raw __barrier_state or barrier marker bytes offline'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and not __fish_seen_subcommand_from list show watch verify decode help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l group -d 'Only this barrier group' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l format -d 'Write one row per (group, epoch, topic, partition, offset) as data instead of a report' -r -f -a "arrow\t'Arrow IPC stream (.arrows)'
arrow-file\t'Arrow IPC file (.arrow)'
parquet\t'Parquet, zstd-compressed'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l out -d 'Where --format writes: a file (replaced atomically) or - for stdout' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l all -d 'Also list partial cuts, injection records and group definitions'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l group -d 'Barrier group' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l epoch -d 'Epoch of the cut, or `latest` (the highest complete cut)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l group -d 'Barrier group' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l count -d 'Exit 0 after this many new cuts' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l poll-interval -d 'Pause between reads of __barrier_state (e.g. 500ms, 2s)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -l all -d 'Also print partial cuts'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from watch" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l group -d 'Barrier group' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l epoch -d 'Epoch of the cut, or `latest` (the highest complete cut)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l consumer-group -d 'Consumer group whose committed offsets must equal the cut offsets' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l snapshot-dir -d 'Directory of state snapshot files' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l layout -d 'Snapshot file naming [default: detected from the directory]' -r -f -a "java-go\t'partition-<p>-epoch-<e>.snapshot (Java 1.3+, Go)'
rust\t'<group>-<task>-epoch-<e>.snapshot (krabka-streams-rs)'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l task-prefix -d 'Rust layout: the subtopology part of the task (`<task-prefix>-<partition>`)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l snapshot-group -d 'Rust layout: the group in file names [default: the barrier group]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l input -d 'Arrow IPC stream or file from `tail`; - reads stdin' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l topic -d 'The topic the input holds (needed when the cut names several topics)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -l at-least -d 'Accept committed offsets past the cut'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from verify" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l key -d 'Key bytes as hex' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l key-file -d 'File holding the raw key bytes' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l value -d 'Value bytes as hex (empty = tombstone)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l value-file -d 'File holding the raw value bytes' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -l marker -d 'The bytes are a barrier marker (control key 000003e8 and marker value), not a __barrier_state record'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from decode" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from help" -f -a "list" -d 'List barrier groups and their cuts (complete cuts only unless --all)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one cut in full: every topic, partition and offset'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from help" -f -a "watch" -d 'Print each new cut of a group as it is published, until Ctrl-C or --count'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Check a cut against committed offsets, snapshot files and/or an Arrow input'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from help" -f -a "decode" -d 'Decode raw __barrier_state or barrier marker bytes offline'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand barrier; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l schema-registry-token-file -d 'File holding a bearer token for the registry (else env KRABKA_SCHEMA_REGISTRY_TOKEN); used when no basic-auth user is set' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l omit-message-type -d 'Leave the krabka `messageType` extension out of register and lookup bodies, for strict Confluent registries'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -f -a "prewarm" -d 'Resolve subjects to schema ids (register, look up or adopt the latest), concurrently, one registry call per subject; optionally write a cache file for `tail` and `run`'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -f -a "inspect" -d 'Show what the registry holds: subjects, versions, schemas by version or id, id usage, compatibility levels'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -f -a "decode" -d 'Decode Confluent-framed bytes (hex argument, --file, or stdin) with the writer schema fetched by id'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -f -a "check" -d 'Check a local schema file against a registered version (exit 3 when incompatible)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and not __fish_seen_subcommand_from prewarm inspect decode check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l subject -d 'Subject to resolve (with --schema-file); more subjects go in --manifest' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l schema-file -d 'Schema file of --subject (.avsc/.json Avro, .proto Protobuf, or set --type)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l type -d 'Schema kind of --schema-file [default: protobuf for .proto, else avro]' -r -f -a "avro\t''
protobuf\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l message-type -d 'Full Protobuf message name [default: the file\'s first message]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l reference -d 'Schema reference of --subject, repeatable' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l manifest -d 'JSON manifest of subjects (see the `schema` docs: subject or topic+role, schema_file, kind, message_type, references)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l mode -d 'How each subject gets its id. lookup-only tries the file as written first, then its canonical form, and reports which one the registry knew' -r -f -a "auto-register\t'Register the schema (idempotent): POST /subjects/{s}/versions'
lookup-only\t'The exact schema must already be registered under the subject: POST /subjects/{s}'
use-latest\t'Adopt the subject\'s latest version: GET /subjects/{s}/versions/latest'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l register-form -d 'The text auto-register sends for Avro schemas (Protobuf and JSON Schema are always sent as written)' -r -f -a "canonical\t'The parsing canonical form krabka-streams-go registers (same id as Go and Java clients registering canonically); drops `default`, `doc`, `aliases`, `order`'
written\t'The file exactly as written (what Confluent serializers and REST users register)'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l write-cache -d 'Write the resolved subjects and their writer schemas to this cache file (atomically), for `tail --schema-cache` and `run --schema-cache`' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l schema-registry-token-file -d 'File holding a bearer token for the registry (else env KRABKA_SCHEMA_REGISTRY_TOKEN); used when no basic-auth user is set' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -l omit-message-type -d 'Leave the krabka `messageType` extension out of register and lookup bodies, for strict Confluent registries'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from prewarm" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l schema-registry-token-file -d 'File holding a bearer token for the registry (else env KRABKA_SCHEMA_REGISTRY_TOKEN); used when no basic-auth user is set' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -l omit-message-type -d 'Leave the krabka `messageType` extension out of register and lookup bodies, for strict Confluent registries'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "subjects" -d 'Every registered subject'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "versions" -d 'The versions of a subject'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "get" -d 'One version of a subject (default: latest)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "id" -d 'A schema by id, with the schemas it references'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "id-usage" -d 'The subjects and versions that use a schema id'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "compatibility" -d 'The global compatibility level, or a subject\'s'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from inspect" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l file -d 'Read the raw frame bytes from this file' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l schema-registry-token-file -d 'File holding a bearer token for the registry (else env KRABKA_SCHEMA_REGISTRY_TOKEN); used when no basic-auth user is set' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l hex-input -d 'Treat the input as hex text (for --file or stdin)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l protobuf -d 'Expect a Protobuf frame (message-index path after the id) even before the writer schema says so'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -l omit-message-type -d 'Leave the krabka `messageType` extension out of register and lookup bodies, for strict Confluent registries'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from decode" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l against -d 'What to check against: SUBJECT (the versions its level names: the latest, or every version for a *-transitive level) or SUBJECT:VERSION (that version only; VERSION may be `latest`)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l level -d 'Compatibility level [default: the subject\'s level, else the global level; a failed lookup is an error]' -r -f -a "backward\t''
backward-transitive\t''
forward\t''
forward-transitive\t''
full\t''
full-transitive\t''
none\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l type -d 'Kind of FILE [default: the registered schema\'s kind]' -r -f -a "avro\t''
protobuf\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l schema-registry-token-file -d 'File holding a bearer token for the registry (else env KRABKA_SCHEMA_REGISTRY_TOKEN); used when no basic-auth user is set' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -l omit-message-type -d 'Leave the krabka `messageType` extension out of register and lookup bodies, for strict Confluent registries'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from check" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from help" -f -a "prewarm" -d 'Resolve subjects to schema ids (register, look up or adopt the latest), concurrently, one registry call per subject; optionally write a cache file for `tail` and `run`'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from help" -f -a "inspect" -d 'Show what the registry holds: subjects, versions, schemas by version or id, id usage, compatibility levels'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from help" -f -a "decode" -d 'Decode Confluent-framed bytes (hex argument, --file, or stdin) with the writer schema fetched by id'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check a local schema file against a registered version (exit 3 when incompatible)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand schema; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "run" -d 'Register, wait for the turn, hold ROLE and run COMMAND while holding it'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "status" -d 'Show one role: roster with ranks, lease holder, token, deadline, each member\'s decision now, and whether the token is the broker\'s epoch'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "list" -d 'Show every role found in the coordination topic, as `status` does'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "watch" -d 'Print each change of a role\'s holder or token as it happens'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "resign" -d 'Make the holder step down: mint a newer epoch (fencing it) and clear the lease'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "deregister" -d 'Remove a member\'s registration from the roster (a registration tombstone)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l role -d 'The role to hold (also the transactional.id whose producer epoch fences it)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l member -d 'This member\'s id, unique among the role\'s members' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l lease -d 'Lease duration (also the transaction timeout of minted producers)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l renew -d 'How often the holder renews its lease; shorter than --lease (3 × renew ≤ lease keeps margin)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l stagger -d 'Extra delay per rank before a standby challenges an expired lease' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l poll -d 'How often a waiting member reads the role\'s state (and retries a failed renewal)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l grace -d 'Time COMMAND gets between SIGTERM and SIGKILL when it must stop' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l topic -d 'The coordination topic (compacted; every member must use the same one)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l standby -d 'Take part without a command: hold the role when the turn comes, until Ctrl-C or a fence (a warm standby that keeps the succession moving)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l create-topic -d 'Create the coordination topic if it does not exist (16 partitions, compacted)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l role -d 'The role to show' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l expect-token -d 'Exit 0 only if TOKEN (producer_id:epoch) is the broker\'s current epoch of the role: 3 when it is not, 4 when the broker cannot tell (no DescribeTransactions)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l lease -d 'Lease duration (also the transaction timeout of minted producers)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l renew -d 'How often the holder renews its lease; shorter than --lease (3 × renew ≤ lease keeps margin)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l stagger -d 'Extra delay per rank before a standby challenges an expired lease' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l poll -d 'How often a waiting member reads the role\'s state (and retries a failed renewal)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l topic -d 'The coordination topic (compacted; every member must use the same one)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l lease -d 'Lease duration (also the transaction timeout of minted producers)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l renew -d 'How often the holder renews its lease; shorter than --lease (3 × renew ≤ lease keeps margin)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l stagger -d 'Extra delay per rank before a standby challenges an expired lease' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l poll -d 'How often a waiting member reads the role\'s state (and retries a failed renewal)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l topic -d 'The coordination topic (compacted; every member must use the same one)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l role -d 'The role to watch' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l count -d 'Exit after this many changes (the state at start counts as the first)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l for -d 'Give up after this long (exit 0); runs until Ctrl-C without it' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l lease -d 'Lease duration (also the transaction timeout of minted producers)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l renew -d 'How often the holder renews its lease; shorter than --lease (3 × renew ≤ lease keeps margin)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l stagger -d 'Extra delay per rank before a standby challenges an expired lease' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l poll -d 'How often a waiting member reads the role\'s state (and retries a failed renewal)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l topic -d 'The coordination topic (compacted; every member must use the same one)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l role -d 'The role' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l member -d 'The member (for `resign`: the member expected to hold the role)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l topic -d 'The coordination topic (compacted; every member must use the same one)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l role -d 'The role' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l member -d 'The member (for `resign`: the member expected to hold the role)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l topic -d 'The coordination topic (compacted; every member must use the same one)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "run" -d 'Register, wait for the turn, hold ROLE and run COMMAND while holding it'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show one role: roster with ranks, lease holder, token, deadline, each member\'s decision now, and whether the token is the broker\'s epoch'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "list" -d 'Show every role found in the coordination topic, as `status` does'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "watch" -d 'Print each change of a role\'s holder or token as it happens'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "resign" -d 'Make the holder step down: mint a newer epoch (fencing it) and clear the lease'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "deregister" -d 'Remove a member\'s registration from the roster (a registration tombstone)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "list" -d 'List a directory\'s snapshot files (or a state topic\'s snapshots): owner, epoch, size, entries, whether each decodes'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "dump" -d 'Print one snapshot\'s entries with their payloads decoded where the format is known'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "restore" -d 'Write a snapshot from a lossless dump, or copy one epoch\'s files to another epoch or to live state'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "verify" -d 'Decode every snapshot file of a directory (or snapshot of a state topic); exit 3 when any is bad'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "prune" -d 'Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "restore-cut" -d 'Put an application back to a barrier cut: state snapshots become live state and the consumer group\'s offsets are set to the cut (a dry run unless --yes)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "copy" -d 'Copy state between a snapshot directory and a state topic, byte for byte, both ways'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and not __fish_seen_subcommand_from list dump restore verify prune restore-cut copy help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l state-topic -d 'List a state topic\'s snapshots instead (`state_store: kafka`), read with the broker flags' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from dump" -l state-topic -d 'Dump from a state topic instead (`state_store: kafka`, with --partition and --epoch), read with the broker flags' -r
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l state-topic -d 'Epoch copy in a state topic (`state_store: kafka`) instead of a directory, with the broker flags: keys `partition-<p>-epoch-<e>` -> `partition-<p>[-epoch-<e>]`' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l from-json -d 'A lossless dump (`snapshot dump --lossless`) to write back as a container' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l to -d 'With --from-json: the file to write, or a snapshot directory (then give --epoch and --partition, or --group and --task with --layout rust)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l partition -d 'Java/Go logical partitions: one for --from-json into a directory; a list such as 0-11 or 0-3,7 for an epoch copy' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l epoch -d 'With --from-json into a directory: the epoch to write, or `live`' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l from-epoch -d 'Epoch copy: the epoch whose files are copied' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l to-epoch -d 'Epoch copy: the epoch written, or `live` to make it the live state' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l layout -d 'File naming written: java-go (`partition-<p>[-epoch-<e>].snapshot`) or rust (`<group>-<task>-epoch-<e>.snapshot`, needs --group and --task)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l group -d 'Rust layout: the barrier group' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l task -d 'Rust layout: a task `<subtopology>-<partition>` (repeatable for an epoch copy)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l convert-legacy -d 'Write the dump of a legacy gen A (Java ≤ 1.2) container as gen B (names re-sorted)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l allow-live-members -d 'Restore even though the consumer group that owns the state (named by the directory\'s identity manifest or the topic\'s records) has live members, which keep their state in memory and would overwrite or ignore the restore'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l state-topic -d 'Verify a state topic\'s snapshots instead (`state_store: kafka`), read with the broker flags' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -l allow-empty -d 'Pass when the directory holds no snapshot file (by default that is exit 3)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from verify" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l state-topic -d 'Prune a state topic\'s barrier-epoch keys instead (`state_store: kafka`), with the broker flags: each pruned key gets a tombstone (dated by its record\'s write time)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l keep -d 'Keep the newest N barrier epochs of each partition or task (Java keeps 100)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l older-than -d 'Delete barrier-epoch files last modified longer ago than this (e.g. 7d, 12h)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l partition -d 'Only these Java/Go partitions (e.g. 0-11 or 0-3,7); Rust files are then left alone' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from prune" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l state-topic -d 'The application\'s state topic instead (`state_store: kafka`): each `partition-<p>-epoch-<e>` snapshot of the cut becomes `partition-<p>`' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l consumer-group -d 'The application\'s consumer group, whose committed offsets are set to the cut' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l layout -d 'Snapshot file layout. Only java-go has live state to restore into' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from restore-cut" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l from-dir -d 'Copy the Java/Go snapshot files of this directory (and its identity manifest) into --to-topic' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l from-topic -d 'Copy every snapshot of this state topic into --to-dir, with the identity manifest' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l to-topic -d 'The state topic written (created compacted when missing)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l to-dir -d 'The snapshot directory written (created when missing)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l partitions -d 'Partitions of a state topic the copy creates (default: the highest logical partition + 1; a run uses the count it finds)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l allow-live-members -d 'Copy even when the consumer group owning the state has live members, which keep their state in memory and would overwrite or ignore the copy'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from copy" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "list" -d 'List a directory\'s snapshot files (or a state topic\'s snapshots): owner, epoch, size, entries, whether each decodes'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "dump" -d 'Print one snapshot\'s entries with their payloads decoded where the format is known'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "restore" -d 'Write a snapshot from a lossless dump, or copy one epoch\'s files to another epoch or to live state'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Decode every snapshot file of a directory (or snapshot of a state topic); exit 3 when any is bad'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "restore-cut" -d 'Put an application back to a barrier cut: state snapshots become live state and the consumer group\'s offsets are set to the cut (a dry run unless --yes)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "copy" -d 'Copy state between a snapshot directory and a state topic, byte for byte, both ways'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand snapshot; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s p -l partitions -d 'Only these partitions (comma list, e.g. 0,3)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l from -d 'Start (and optional stop): start|end|+N|-N|N|@TIME|@-1h|s@TIME, then :end|:N|:TIME [default: start]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s n -l max-records -l num -d 'Stop after this many records (after filtering)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s g -l group -d 'Consume as this consumer group (positions from its committed offsets; commits what was written)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l isolation -d 'Transaction isolation of the reads' -r -f -a "read-committed\t''
read-uncommitted\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l key-glob -d 'Keep only records whose key matches this glob (*, ?, [a-z])' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l header -d 'Keep only records with a header NAME whose value matches GLOB (repeatable; all must match)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l where -d 'Keep only rows for which this SQL predicate over the decoded columns is true (payload and reserved columns, e.g. "amount > 100 AND __partition = 0"); null is false' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l columns -d 'Output only these columns, in this order (payload and reserved names, comma list)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l key-format -d 'Key format, optionally per topic: [TOPIC=]raw|string|json|json:FILE|json-sr|protobuf|avro|avro:FILE|gzip+… (repeatable)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l value-format -d 'Value format, optionally per topic: [TOPIC=]raw|string|json|json:FILE|json-sr|protobuf|avro|avro:FILE|arrow|gzip+… (repeatable)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l format -d 'Output format [default: table on a terminal, else arrow; with --out, from the extension]' -r -f -a "arrow\t'Arrow IPC stream (`.arrows`, application/vnd.apache.arrow.stream)'
arrow-file\t'Arrow IPC file (`.arrow`)'
parquet\t'Parquet, zstd-compressed, every timestamp in µs, headers typed (see --headers-encoding)'
ndjson\t'One JSON object per line: raw bytes as text when UTF-8 (see --binary), headers as an object, nested values as JSON'
table\t'A table preview for people'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l out -d 'Write to this file (published atomically when the tail ends; `-` = stdout)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l binary -d 'NDJSON and table: raw keys, raw values and header values as text when valid UTF-8 (auto) or always as base64 [default: auto]' -r -f -a "auto\t'Valid UTF-8 as text (as kcat prints it), other bytes as {"base64": "…"}'
base64\t'Every byte string as a base64 JSON string'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l headers-encoding -d 'Arrow IPC and Parquet: typed reserved columns (list) or the library\'s byte layout (library) [default: list]' -r -f -a "list\t'Typed: __headers as list<struct<key: utf8, value: binary>>, __timestamp as timestamp[ms, UTC] (µs in Parquet)'
library\t'The library layout (docs/formats.md §3/§4): __headers as the header-list byte cell, __timestamp as Int64 epoch ms'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l row-group-size -d 'Parquet row-group size in rows' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l threads -d 'Threads one batch may be worked on (default: the available cores): `run` offline splits filters, derived columns, group-bys and joins over them, `run` and `tail` encode Parquet columns on them. The output is byte-identical at every count; 1 is the one-thread path' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l rotate-rows -d 'Start a new output file (PATH-000000.ext, …) after this many rows' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l rotate-bytes -d 'Start a new output file after about this many bytes (e.g. 256MiB)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l on-error -d 'Undecodable records: fail (exit 1), skip (reported on stderr), or dead-letter FILE (NDJSON)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l batch-records -d 'Largest number of records decoded into one Arrow batch' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l schema-cache -d 'Schema cache file written by `schema prewarm --write-cache`: its ids need no registry round trip' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s e -l until-end -d 'Stop at the end offsets seen when the tail starts (also in group mode)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l topic-column -d 'Add the `__topic` column (dictionary-encoded utf8, before `__key`) also when one topic is read; with several topics it is always there'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s i -l input -d 'Read from this file (`-` = stdin; a FIFO is read as a stream)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l format -d 'Input format' -r -f -a "auto\t'From the extension, else the first bytes (Arrow IPC, Parquet), else lines'
arrow\t'Arrow IPC, stream or file'
parquet\t''
ndjson\t'Rows as `tail --format ndjson` writes them'
lines\t'One record per line, as kcat -P (-K key separator, -H headers)'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l value-format -d 'Value encoding: raw|string (the `value` column)|json|avro|protobuf|json-sr (registry, schema from the columns or --value-schema)|arrow|gzip+…' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l value-schema -d 'Writer schema of a registry value format: FILE.avsc, FILE.proto[:pkg.Msg] or FILE.json' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l key-column -d 'Key from this column (encoded by --key-format) instead of __key' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l drop-columns -d 'Leave these input columns out (comma list), e.g. `key`, the decoded key column `tail --key-format` adds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l key-format -d 'Encoding of --key-column: string|raw|json|avro|protobuf|json-sr [default: string]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s k -l key -d 'Lines: this key for every record (kcat -k)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s K -l key-separator -d 'Lines: the bytes before the first SEP are the key (kcat -K)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s H -l header -d 'Lines: add this header to every record, NAME=VALUE or NAME for a null value (repeatable; kcat -H)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l binary -d 'NDJSON: raw keys, raw values and header values are text or {"base64": …} (auto), or every one base64 (base64), as `tail --binary` wrote them' -r -f -a "auto\t'Text when valid UTF-8, other bytes as {"base64": "…"}'
base64\t'Every byte string a base64 JSON string'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s p -l partition -d 'keep (each row\'s __partition), hash (murmur2 of the key as Kafka\'s default partitioner; a keyless record goes where librdkafka\'s partitioner puts it, a random partition kept for sticky.partitioning.linger.ms) or a partition number (kcat -p)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l transactional-id -d 'The transactional id [default: krabka-streams-produce-TOPIC-PID]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l on-error -d 'Rows that cannot be encoded: fail (exit 1 naming the row), skip (reported on stderr), or dead-letter FILE (NDJSON)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l batch-rows -d 'Rows read and encoded at a time' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l transactional -d 'All or nothing: one transaction, aborted on any error, Ctrl-C or SIGTERM (exit 130) (read_committed readers see all rows or none)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand produce" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s h -l help -d 'Print help'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand completions" -s V -l version -d 'Print version'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "run" -d 'Run a topology file: validate it (--check), print its graph (--explain), run it as a consumer group (-b), or offline over Arrow IPC (--input)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "dev-cluster" -d 'Serve an embedded Kafka-protocol cluster and schema registry until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "barrier" -d 'Barrier cuts in __barrier_state: list, show, watch, verify, decode'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "schema" -d 'Schema registry: prewarm subjects, inspect schemas, decode frames, check compatibility'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "leader" -d 'Run or inspect leader elections fenced by the producer epoch'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "snapshot" -d 'State snapshot files: list, dump, restore, verify, prune, and restore to a barrier cut'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "tail" -d 'Read topics as Arrow record batches: Arrow IPC, Parquet, NDJSON or a table'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "produce" -d 'Write rows of Arrow IPC, Parquet or NDJSON (or plain lines, as kcat -P) to a topic'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster barrier schema leader snapshot tail produce completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from barrier" -f -a "list" -d 'List barrier groups and their cuts (complete cuts only unless --all)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from barrier" -f -a "show" -d 'Show one cut in full: every topic, partition and offset'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from barrier" -f -a "watch" -d 'Print each new cut of a group as it is published, until Ctrl-C or --count'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from barrier" -f -a "verify" -d 'Check a cut against committed offsets, snapshot files and/or an Arrow input'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from barrier" -f -a "decode" -d 'Decode raw __barrier_state or barrier marker bytes offline'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from schema" -f -a "prewarm" -d 'Resolve subjects to schema ids (register, look up or adopt the latest), concurrently, one registry call per subject; optionally write a cache file for `tail` and `run`'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from schema" -f -a "inspect" -d 'Show what the registry holds: subjects, versions, schemas by version or id, id usage, compatibility levels'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from schema" -f -a "decode" -d 'Decode Confluent-framed bytes (hex argument, --file, or stdin) with the writer schema fetched by id'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from schema" -f -a "check" -d 'Check a local schema file against a registered version (exit 3 when incompatible)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "run" -d 'Register, wait for the turn, hold ROLE and run COMMAND while holding it'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "status" -d 'Show one role: roster with ranks, lease holder, token, deadline, each member\'s decision now, and whether the token is the broker\'s epoch'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "list" -d 'Show every role found in the coordination topic, as `status` does'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "watch" -d 'Print each change of a role\'s holder or token as it happens'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "resign" -d 'Make the holder step down: mint a newer epoch (fencing it) and clear the lease'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "deregister" -d 'Remove a member\'s registration from the roster (a registration tombstone)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "list" -d 'List a directory\'s snapshot files (or a state topic\'s snapshots): owner, epoch, size, entries, whether each decodes'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "dump" -d 'Print one snapshot\'s entries with their payloads decoded where the format is known'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "restore" -d 'Write a snapshot from a lossless dump, or copy one epoch\'s files to another epoch or to live state'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "verify" -d 'Decode every snapshot file of a directory (or snapshot of a state topic); exit 3 when any is bad'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "prune" -d 'Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "restore-cut" -d 'Put an application back to a barrier cut: state snapshots become live state and the consumer group\'s offsets are set to the cut (a dry run unless --yes)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from snapshot" -f -a "copy" -d 'Copy state between a snapshot directory and a state topic, byte for byte, both ways'
