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
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "tail" -d 'Read topics as Arrow record batches: Arrow IPC, Parquet, NDJSON or a table'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s p -l partitions -d 'Only these partitions (comma list, e.g. 0,3)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l from -d 'Start (and optional stop): start|end|+N|-N|N|@TIME|@-1h|s@TIME, then :end|:N|:TIME [default: start]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s n -l max-records -l num -d 'Stop after this many records (after filtering)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s g -l group -d 'Consume as this consumer group (positions from its committed offsets; commits what was written)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l isolation -d 'Transaction isolation of the reads' -r -f -a "read-committed\t''
read-uncommitted\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l key-glob -d 'Keep only records whose key matches this glob (*, ?, [a-z])' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l header -d 'Keep only records with a header NAME whose value matches GLOB (repeatable; all must match)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l columns -d 'Output only these columns, in this order (payload and reserved names, comma list)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l key-format -d 'Key format, optionally per topic: [TOPIC=]raw|string|json|json:FILE|json-sr|avro|avro:FILE|gzip+… (repeatable)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l value-format -d 'Value format, optionally per topic: [TOPIC=]raw|string|json|json:FILE|json-sr|avro|avro:FILE|arrow|gzip+… (repeatable)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l format -d 'Output format [default: table on a terminal, else arrow; with --out, from the extension]' -r -f -a "arrow\t'Arrow IPC stream (`.arrows`, application/vnd.apache.arrow.stream)'
arrow-file\t'Arrow IPC file (`.arrow`)'
parquet\t'Parquet, zstd-compressed, timestamps in ms/µs'
ndjson\t'One JSON object per line; binary as base64, nested values as JSON'
table\t'A table preview for people'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l out -d 'Write to this file (published atomically when the tail ends; `-` = stdout)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l row-group-size -d 'Parquet row-group size in rows' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l rotate-rows -d 'Start a new output file (PATH-000000.ext, …) after this many rows' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l rotate-bytes -d 'Start a new output file after about this many bytes (e.g. 256MiB)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l on-error -d 'Undecodable records: fail (exit 1), skip (reported on stderr), or dead-letter FILE (NDJSON)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l batch-records -d 'Largest number of records decoded into one Arrow batch' -r
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand tail" -s V -l version -d 'Print version'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster tail completions generate-assets help" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster tail completions generate-assets help" -f -a "dev-cluster" -d 'Serve an embedded single-process Kafka-protocol cluster until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster tail completions generate-assets help" -f -a "tail" -d 'Read topics as Arrow record batches: Arrow IPC, Parquet, NDJSON or a table'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster tail completions generate-assets help" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster tail completions generate-assets help" -f -a "generate-assets" -d 'Regenerate the committed completions and man pages (used by `cargo xtask`)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster tail completions generate-assets help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
