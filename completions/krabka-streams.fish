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
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "run" -d 'Run a topology file: validate it (--check), print its graph (--explain), or run it offline over Arrow IPC'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "dev-cluster" -d 'Serve an embedded single-process Kafka-protocol cluster until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "generate-assets" -d 'Regenerate the committed completions and man pages (used by `cargo xtask`)'
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l input -d 'Run offline: read an Arrow IPC stream or file (`-` = stdin) into a source, named by node or topic. Repeatable' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l sink -d 'Offline: write a sink\'s batches to PATH, named by node or topic: `.arrows` IPC stream, `.arrow` IPC file, `-` stdout (stream). Repeatable' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l dead-letter -d 'Offline with `error_policy: dead-letter`: write the failed input rows (with the krabka.error.* headers) to PATH' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l metrics-interval -d 'Print the metrics so far on stderr at this interval (e.g. 5s)' -r
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s y -l yes -d 'Do not ask for confirmation'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand run" -s V -l version -d 'Print version'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster completions generate-assets help" -f -a "run" -d 'Run a topology file: validate it (--check), print its graph (--explain), or run it offline over Arrow IPC'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster completions generate-assets help" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster completions generate-assets help" -f -a "dev-cluster" -d 'Serve an embedded single-process Kafka-protocol cluster until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster completions generate-assets help" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster completions generate-assets help" -f -a "generate-assets" -d 'Regenerate the committed completions and man pages (used by `cargo xtask`)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from run demo dev-cluster completions generate-assets help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
