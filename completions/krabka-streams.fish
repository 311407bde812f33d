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
complete -c krabka-streams -n "__fish_krabka_streams_needs_command" -f -a "leader" -d 'Run or inspect leader elections fenced by the producer epoch'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s b -l bootstrap-server -d 'Bootstrap broker(s), comma-separated host:port list' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l command-config -d 'Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -s X -d 'librdkafka property override, repeatable (layered over --command-config)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l client-id -d 'Client id sent to the broker [default: krabka-streams/<version> <command>]' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l request-timeout-ms -d 'Per-request timeout in milliseconds' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l timeout -d 'Overall timeout of the command\'s broker and registry operations (e.g. 30s, 2m)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and not __fish_seen_subcommand_from run status list watch resign deregister help" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from run" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from status" -s y -l yes -d 'Do not ask for confirmation'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from list" -s y -l yes -d 'Do not ask for confirmation'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l output -d 'Report format' -r -f -a "human\t'Tables and sentences for people'
json\t'Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr'"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l log-format -d 'Log line format on stderr' -r -f -a "text\t''
json\t''"
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s v -l verbose -d 'More log output on stderr (-v debug, -vv trace)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s q -l quiet -d 'Less log output on stderr (-q warn, -qq error, -qqq off)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -l dry-run -d 'Validate and read, change nothing; the report says what would happen'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from watch" -s y -l yes -d 'Do not ask for confirmation'
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from resign" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l registry -d 'Schema registry base URL (credentials never go in the URL)' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l schema-registry-user -d 'Basic-auth user for the registry' -r
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand leader; and __fish_seen_subcommand_from deregister" -l schema-registry-password-file -d 'File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD)' -r -F
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
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster leader completions generate-assets help" -f -a "demo" -d 'Walk through every subcommand on an embedded cluster and registry, no setup needed'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster leader completions generate-assets help" -f -a "dev-cluster" -d 'Serve an embedded single-process Kafka-protocol cluster until Ctrl-C'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster leader completions generate-assets help" -f -a "leader" -d 'Run or inspect leader elections fenced by the producer epoch'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster leader completions generate-assets help" -f -a "completions" -d 'Print a shell completion script'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster leader completions generate-assets help" -f -a "generate-assets" -d 'Regenerate the committed completions and man pages (used by `cargo xtask`)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and not __fish_seen_subcommand_from demo dev-cluster leader completions generate-assets help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "run" -d 'Register, wait for the turn, hold ROLE and run COMMAND while holding it'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "status" -d 'Show one role: roster with ranks, lease holder, token, deadline, each member\'s decision now, and whether the token is the broker\'s epoch'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "list" -d 'Show every role found in the coordination topic, as `status` does'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "watch" -d 'Print each change of a role\'s holder or token as it happens'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "resign" -d 'Make the holder step down: mint a newer epoch (fencing it) and clear the lease'
complete -c krabka-streams -n "__fish_krabka_streams_using_subcommand help; and __fish_seen_subcommand_from leader" -f -a "deregister" -d 'Remove a member\'s registration from the roster (a registration tombstone)'
