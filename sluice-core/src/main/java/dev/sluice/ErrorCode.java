package dev.sluice;

import java.util.Arrays;
import java.util.Optional;

/**
 * The catalogue of Sluice error codes ({@code SLU-nnnn}). Every {@link SluiceException} carries one.
 * Callers branch on codes (or exception types), never on message text. {@code sluice explain CODE}
 * prints an entry offline; {@code docs/errors.md} is generated from this enum.
 */
public enum ErrorCode {
    // 00xx: bad input, rejected before any round trip
    INVALID_NAME(1, Category.INVALID_INPUT, false,
            "A name is not valid.",
            "Stream, group, queue, schedule and lock names must match ^[a-z0-9][a-z0-9._-]{0,127}$ "
                    + "(lower case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters). "
                    + "Names starting with '__system.' are reserved for built-in streams.",
            "Choose a name that matches the pattern, for example 'orders' or 'billing.invoices-v2'."),
    INVALID_SCHEMA_NAME(2, Category.INVALID_INPUT, false,
            "The database schema name is not valid.",
            "The installation schema must match ^[a-z_][a-z0-9_]{0,62}$ so it can be used as an identifier.",
            "Pass a schema such as 'sluice' or 'app_sluice' to Sluice.builder().schema(...) or --schema."),
    INVALID_CONFIG(3, Category.INVALID_INPUT, false,
            "A configuration value is out of range.",
            "A config field was given a value outside its allowed range (for example a partition size below 1, "
                    + "a negative or zero TTL, or a payload limit over 64 MiB), or a group's dead-letter id list is null, "
                    + "holds null or more than 10000 ids.",
            "Correct the value named in the message; every option's range is in docs/streams.md."),
    PAYLOAD_TOO_LARGE(4, Category.INVALID_INPUT, false,
            "The payload is larger than the stream or queue allows.",
            "The serialized payload exceeds the stream's max_payload_bytes or the queue's maxPayloadBytes (default 1 MiB). "
                    + "It was rejected before any round trip; nothing was written.",
            "Send a smaller payload (store large blobs elsewhere and produce a reference), or raise maxPayloadBytes "
                    + "on the stream or in the QueueOptions (at most 64 MiB)."),
    INVALID_KEY(5, Category.INVALID_INPUT, false,
            "A message, routing, idempotency or unique key is not valid.",
            "Keys must be 1 to 256 characters without control characters (U+0000 to U+001F, U+007F to U+009F, the "
                    + "bidirectional overrides U+202A to U+202E and U+2066 to U+2069, and the line and paragraph separators "
                    + "U+2028 and U+2029): operators' tools print keys, and a control character could drive their terminal. "
                    + "Nothing was written.",
            "Shorten the key (hash long natural keys) or drop the option."),
    INVALID_HEADERS(6, Category.INVALID_INPUT, false,
            "The message or job headers are not valid.",
            "Headers are a small string map: at most 64 entries, names 1 to 128 characters without control characters "
                    + "(as for keys), values without the NUL character, at most 8 KiB in total. Nothing was written.",
            "Move large or binary metadata into the payload; keep headers for trace context and routing hints."),
    NULL_PAYLOAD(7, Category.INVALID_INPUT, false,
            "The payload is null.",
            "Every message and job needs a payload; null is rejected before any round trip.",
            "Pass a payload (an empty byte array or an empty JSON object if the message is only a signal)."),
    PAYLOAD_NOT_SERIALIZABLE(8, Category.INVALID_INPUT, false,
            "The payload could not be serialized.",
            "The producer's serde (Jackson JSON by default) failed on this payload; the cause is attached. Nothing was written.",
            "Make the type serializable by Jackson (public getters or a record), or give the producer a Serde."),
    INVALID_OPTIONS(9, Category.INVALID_INPUT, false,
            "The produce options contradict each other.",
            "For example compaction without a message key, or a schema version below 1. Nothing was written.",
            "Correct the options named in the message (see docs/produce.md)."),
    INVALID_BINDING(10, Category.INVALID_INPUT, false,
            "A binding pattern is not valid.",
            "Binding patterns are 1 to 256 characters without whitespace or control characters ('*' matches any run, "
                    + "'?' one character); at most 100 per group. Nothing was changed.",
            "Correct the pattern, for example 'orders.*' or 'eu.orders.?reated'."),
    INVALID_QUEUE_OPTIONS(11, Category.INVALID_INPUT, false,
            "A queue, enqueue or worker option is not valid.",
            "A QueueOptions, EnqueueOptions or WorkOptions value is out of range (for example a zero visibility timeout, "
                    + "a negative delay, a delay, runAt or expiresAt more than 3650 days ahead, a priority outside -1000..1000, or "
                    + "expiresAt not after runAt), a claim or page size "
                    + "is out of range, a dead-letter id list is null, holds null or more than 10000 ids, a page cursor is foreign, or enqueueInTransaction got an auto-commit connection. "
                    + "It was rejected before any round trip; nothing was written.",
            "Correct the value named in the message; every option's range and default is in docs/queues.md."),
    INVALID_LOCK_OPTIONS(12, Category.INVALID_INPUT, false,
            "A lock or leader-election option is not valid.",
            "A lock TTL must be positive and at most 30 days; a leader-election TTL must be at least 300 ms (it is "
                    + "renewed every third of it). It was rejected before any round trip; nothing was changed.",
            "Pass a TTL in range, for example Duration.ofSeconds(30); see docs/locks.md."),
    INVALID_SCHEDULE(13, Category.INVALID_INPUT, false,
            "A schedule specification is not valid.",
            "The cron expression does not parse (5 fields, or 6 with seconds first) or never fires, an '@every' "
                    + "interval is not '@every <n>{s|m|h|d}' with n at least 1 (at most 3650 days), the time zone is "
                    + "unknown, a catch-up bound is outside 1..1000, or the target is missing. It was rejected before "
                    + "anything was written.",
            "Correct the expression (for example '0 9 * * MON-FRI' or '@every 5m') or the zone (an IANA name such as "
                    + "'Europe/Berlin'); see docs/schedules.md."),
    INVALID_DATABASE_URL(14, Category.INVALID_INPUT, false,
            "The database URL is not valid.",
            "The URL given to --database-url, SLUICE_DATABASE_URL or Sluice.builder().jdbcUrl(...) is not a PostgreSQL "
                    + "URL Sluice can use (jdbc:postgresql://host[:port]/database?user=...; postgres:// and postgresql:// "
                    + "URLs are converted), or one of its parts (such as the port) does not parse. The password is "
                    + "never shown in the message.",
            "Correct the URL, for example jdbc:postgresql://localhost:5432/app?user=me (pass the password in the URL, "
                    + "in ~/.pgpass, or through your own DataSource)."),
    INVALID_ARGUMENT(15, Category.INVALID_INPUT, false,
            "A command argument is not valid.",
            "An argument parsed but cannot be used: a file that does not exist, cannot be read or is larger than the "
                    + "limit; a number, time or duration outside the supported range (negative durations, times more "
                    + "than 10 years ahead, ids that do not fit a 64-bit integer). Nothing was changed.",
            "Correct the argument named in the message; 'sluice <command> --help' shows each flag's form and range."),

    // 01xx: catalog state
    STREAM_NOT_FOUND(100, Category.NOT_FOUND, false,
            "The stream does not exist.",
            "The operation names a stream that has not been registered in this schema, or that was renamed or destroyed.",
            "Register it first (stream(name).register(config) or 'sluice stream register NAME'), or check the name "
                    + "with 'sluice stream list' and the schema with --schema."),
    STREAM_NAME_TAKEN(101, Category.CONFLICT, false,
            "Another stream already has that name.",
            "A rename targets a name that another stream already uses. Names are unique per schema.",
            "Pick another name, or rename or destroy the other stream first."),
    IMMUTABLE_FIELD(102, Category.CONFLICT, false,
            "An immutable configuration field cannot change.",
            "The declaration changes a field that is fixed at creation: partition_size decides the log's partition "
                    + "boundaries and can never change for an existing stream. Nothing was changed.",
            "Declare the stream with its existing partition size (see 'sluice stream get NAME'), or create a new stream."),
    DESTROY_NOT_ALLOWED(103, Category.PERMISSION, false,
            "Destroying is not allowed for this client.",
            "Destroy drops tables and cannot be undone, so clients refuse it unless built with allowDestroy(true).",
            "Build the client with Sluice.builder().allowDestroy(true); the CLI's destroy commands set it and require --yes."),
    STREAM_NOT_EMPTY(104, Category.CONFLICT, false,
            "The stream still holds messages.",
            "Destroy refuses a stream whose log is not empty unless forced, so data is not dropped by accident. Nothing was changed.",
            "Pass force=true (CLI: --force) if the messages may be dropped."),
    SYSTEM_NOT_REGISTERED(105, Category.NOT_FOUND, false,
            "The Sluice control plane is not installed in this schema.",
            "The operation needs the control plane tables, but the schema has none.",
            "Run sluice.system().register() or 'sluice system register' (or register a stream, which installs it)."),
    PRODUCER_CLOSED(106, Category.CONFLICT, false,
            "The producer is closed.",
            "produce was called after close() (or after the client was closed); the message was not accepted.",
            "Create a new producer with stream.producer(), or produce before closing."),
    PARTITION_UNAVAILABLE(107, Category.STORAGE, true,
            "No log partition exists for the message and none could be created.",
            "The producer's process creates partitions ahead of the head, but this time it could not (for example "
                    + "the database user lacks CREATE on the schema, or the DDL lock was busy). Nothing was written.",
            "Retry: the produce paths extend partitions before they raise this. If it repeats, grant the producer's "
                    + "user CREATE on the schema, or have a user with DDL rights run 'sluice stream extend-partitions NAME' "
                    + "(or stream(name).extendPartitions(n), or register the stream again)."),
    GROUP_NOT_FOUND(108, Category.NOT_FOUND, false,
            "The consumer group does not exist.",
            "The operation names a group that has not been registered on this stream.",
            "Register it with stream.consumerGroup(name).register(config), or check 'sluice consumer list STREAM'."),
    MESSAGE_NOT_FOUND(109, Category.NOT_FOUND, false,
            "No such message in the group's exception queue.",
            "An operator action (redrive, purge) named a message id that has no dead letter or exception row in this "
                    + "group. Nothing was changed.",
            "List the group's dead letters with 'sluice consumer dead STREAM GROUP' and use an id from there."),
    INSTANCES_LIVE(110, Category.CONFLICT, false,
            "The group has live consumer instances.",
            "Rewinding moves the group's cursor under running consumers, which would race their claims; it is refused "
                    + "while instances are live. Nothing was changed.",
            "Stop the group's consumers first, or pass force (CLI: --force) if the race is acceptable."),
    LEASE_LOST(111, Category.CONFLICT, false,
            "The lease was lost; the outcome was refused.",
            "This holder's lease on a range or message expired (or was taken over) before the outcome was recorded; "
                    + "another instance redelivers it. Nothing was changed.",
            "Make handlers finish within the lease (ConsumeOptions.leaseTimeout), or let renewal keep it alive."),
    CONSUMER_CLOSED(112, Category.CONFLICT, false,
            "The consumption is closed.",
            "An operation was attempted on a consumption after close().",
            "Start a new consumption with group.consume(handler, options)."),
    SCHEDULE_NOT_FOUND(113, Category.NOT_FOUND, false,
            "The schedule does not exist.",
            "The operation names a schedule that has not been registered in this schema, or that was destroyed "
                    + "(destroying a stream also destroys the schedules that target it). Nothing was changed.",
            "Register it with sluice.schedule(name).register(spec) or 'sluice schedule register NAME ...', or check the "
                    + "name with 'sluice schedule list'."),
    JOB_NOT_FOUND(114, Category.NOT_FOUND, false,
            "No such job in the queue.",
            "An operator action (redrive, purge) named a job id that is not a dead job of this queue (never was, already "
                    + "redriven or purged, or swept by retention) — the whole list is refused and nothing was changed — or "
                    + "an await or cancel named a job the queue has no trace of: not live, not dead, and no run record "
                    + "(a job that ended without keepRuns and without a waiter leaves none; records are swept after "
                    + "their retention).",
            "List the queue's jobs with 'sluice queue jobs QUEUE', its dead jobs with 'sluice queue dead QUEUE' and its runs "
                    + "with 'sluice queue runs QUEUE'; keep runs (QueueOptions.keepRuns) for jobs you look up after they end."),
    PRODUCER_BUFFER_FULL(115, Category.STORAGE, true,
            "The producer's buffer is full.",
            "Asynchronous produces are buffered until the batcher writes them; the buffer is bounded in messages and "
                    + "bytes (ProducerConfig.maxBufferedMessages / maxBufferedBytes). It stays full when the database is "
                    + "slow or unreachable. produceAsync fails at once; produce waits up to ProducerConfig.bufferTimeout "
                    + "first. The message was not accepted.",
            "Retry after a pause (back off), produce less at once, or raise the bounds; check that the database is "
                    + "reachable and keeping up."),
    SCHEMA_NOT_SLUICE(116, Category.CONFLICT, false,
            "The schema holds other objects and no Sluice installation.",
            "Sluice installs its tables only into a schema that is empty or already holds a Sluice installation (its "
                    + "migration_log), so it never mixes its tables into an application's schema by accident. Nothing "
                    + "was changed.",
            "Use a schema of its own (the default 'sluice'), or pass --force-schema (Sluice.builder().forceSchema(true)) "
                    + "if installing into this schema is intended."),
    PARTITION_NOT_CREATABLE(117, Category.PERMISSION, false,
            "No log partition exists for the message and this database user cannot create one.",
            "The stream's id sequence has run past its partitions and the producer's user lacks the right to create "
                    + "tables in the schema (a least-privilege runtime role). A retry fails the same way until someone "
                    + "extends the partitions. Nothing was written; a caller's transaction is rolled back.",
            "Have a user with DDL rights run 'sluice stream extend-partitions NAME --ahead N' (or "
                    + "stream(name).extendPartitions(n), or register the stream again), then retry; see docs/security.md."),
    CLIENT_CLOSED(118, Category.CONFLICT, false,
            "The Sluice client is closed.",
            "Something that runs in the background (a producer, a consumption, a queue worker, a leadership, a schedule "
                    + "runner) was started after its client was closed. Nothing was started: what the call had begun is "
                    + "stopped again.",
            "Start work before closing the client, or build a new client."),
    WORKER_NOT_FOUND(119, Category.NOT_FOUND, false,
            "No such worker.",
            "The fleet has no worker of that key: 'manager' and 'schedules' exist once a client ran them, 'queue:QUEUE' once a "
                    + "worker of the queue ran, and 'consumer:STREAM/GROUP' once the group is registered. Nothing was changed.",
            "List the workers with 'sluice fleet list' (or sluice.fleet().workers()) and use a key from it."),
    PARTITIONS_MISMATCH(120, Category.CONFLICT, false,
            "The group's partition count differs from the stored one.",
            "A partitioned group's number of buckets is fixed when it is created: every member hashes message keys into "
                    + "the same buckets, and each bucket keeps its own position. A declaration with another count (or one "
                    + "that turns partitioning on or off) is refused. Nothing was changed.",
            "Declare the stored count (see 'sluice consumer get STREAM GROUP'), or change it on purpose with the group "
                    + "paused: 'sluice consumer repartition STREAM GROUP --partitions N' (GroupAdmin.repartition); see docs/partitions.md."),
    AWAIT_TIMEOUT(121, Category.CONFLICT, true,
            "The job did not end within the await timeout.",
            "queue.await(id, timeout) waits until the job ends (succeeded, discarded, dead or cancelled). It was still "
                    + "live when the timeout passed. Nothing was changed: the job runs on, and its end is recorded as usual.",
            "Await again with a longer timeout (a job that keeps runs can be awaited any time, even after a restart), or "
                    + "look at it with 'sluice queue run QUEUE ID'."),
    PARENT_NOT_FOUND(122, Category.NOT_FOUND, false,
            "A parent job of EnqueueOptions.after does not exist.",
            "Every parent must exist when its child is enqueued: live (pending, waiting or running), dead, or ended with "
                    + "a run record. A parent that succeeded without keepRuns and without a waiter left no trace, so it "
                    + "cannot be told apart from an id that never existed. Nothing was written.",
            "Enqueue the child while its parents are live (for example in the same transaction), or let the parents' "
                    + "queue keep runs (QueueOptions.keepRuns) so their success is on record."),
    REGISTRATION_NOT_PERMITTED(123, Category.PERMISSION, false,
            "This database user may not create a stream's tables.",
            "Registering a new stream creates its family of tables (and a stream whose family is behind needs DDL "
                    + "too), which only a role that owns the schema may do. The user of this client has DML grants only "
                    + "(a least-privilege runtime role), so the registration was refused before anything changed.",
            "Register the stream as the migration role that owns the schema, for example at deploy time: "
                    + "'sluice --database-url URL-OF-THE-MIGRATION-ROLE stream register NAME' (or "
                    + "Sluice.builder() with that role, then stream(name).register(config)); the runtime role then uses "
                    + "it as it is. See docs/security.md."),
    MIGRATION_FILE_CONFLICT(124, Category.CONFLICT, false,
            "An exported migration file exists with other content.",
            "'sluice migrate sql --format flyway|liquibase --out DIR' (Migrations.export) found a file of the export "
                    + "already in DIR with different content. Files of released steps never change, so a different file "
                    + "was edited, belongs to another schema or version start, or is someone else's; migration tools "
                    + "check the checksums of applied files, so Sluice never overwrites one. Nothing was written.",
            "Export into an empty folder (or the one holding an earlier export with the same --schema and "
                    + "--version-start, which is left as it is), or compare the file named in the message with "
                    + "the export and restore it."),
    LISTENER_INVALID(126, Category.INVALID_INPUT, false,
            "A Spring @SluiceListener or @SluiceJob method, or a sluice.* property, is not valid.",
            "The Spring Boot starter checks every annotated listener and job method, and the sluice.* properties, when "
                    + "the application context starts: a stream listener takes the payload, a Message<T>, or both (payload "
                    + "first) and returns Outcome or void; a job takes the payload, a JobHandle<T>, or both; every "
                    + "annotation value (names, policies, durations, counts, after placeholders are resolved) must be in "
                    + "range. The context did not start; nothing was consumed.",
            "Correct the method or the value named in the message; the rules and every option are in docs/spring-boot.md."),

    // 02xx: migrations and version gates
    DATABASE_OLDER(200, Category.MIGRATION, false,
            "The database schema is older than this version of Sluice.",
            "The migration ledger of a scope (the system or a stream family) lacks steps this code needs, and this "
                    + "client is not allowed to migrate (or the operation only reads). Nothing was changed.",
            "Run 'sluice migrate up' (or sluice.migrations().up()); registration migrates by itself unless the client "
                    + "was built with migrate(false)."),
    DATABASE_NEWER(201, Category.MIGRATION, false,
            "The database schema is newer than this version of Sluice.",
            "The migration ledger records steps this code does not know: a newer Sluice has migrated the schema. "
                    + "Running older code against it could corrupt data, so it refuses. Nothing was changed.",
            "Upgrade this application to the Sluice version that migrated the schema (see 'sluice migrate status')."),
    MIGRATION_CHECKSUM_MISMATCH(202, Category.MIGRATION, false,
            "An applied migration step differs from the code.",
            "The checksum recorded in migration_log for an applied step does not match the step shipped with this code: "
                    + "the ledger was edited, or the code's released step was changed. Nothing was changed.",
            "Restore the original ledger rows or run the matching Sluice version; released steps are append-only."),
    MIGRATION_LOCK_TIMEOUT(203, Category.MIGRATION, true,
            "Timed out waiting for the schema migration lock.",
            "Another process holds the schema-scoped advisory lock (it is migrating or registering) for too long.",
            "Retry; if it persists, look for a stuck session in pg_stat_activity holding an advisory lock."),

    // 03xx: storage
    DATABASE_UNAVAILABLE(300, Category.STORAGE, true,
            "The database cannot be reached.",
            "Opening a connection or sending a statement failed at the network or connection level (work that cannot have"
                    + " committed was first replayed on other pooled connections, up to 32, in case only this one had died).",
            "Check the database URL, that PostgreSQL is running, and network access; the operation can be retried."),
    TRANSACTION_CONFLICT(301, Category.STORAGE, true,
            "The transaction kept conflicting with concurrent work.",
            "A serialization failure, deadlock or lock timeout repeated until the retry budget (8 attempts) was spent.",
            "Retry later; if it persists, reduce contention on the same rows (for example fewer concurrent writers of one key)."),
    DATABASE_ERROR(302, Category.STORAGE, false,
            "The database reported an unexpected error.",
            "A statement failed for a reason Sluice does not classify; the SQLState and message are attached as the cause.",
            "Read the cause; check permissions (DDL needs CREATE on the schema) and server logs."),
    PERMISSION_DENIED(303, Category.STORAGE, false,
            "The database user lacks a needed privilege.",
            "PostgreSQL refused the statement with insufficient_privilege (SQLState 42501).",
            "Grant the privilege (DDL for register/migrate, DML for producers and consumers), or apply the DDL "
                    + "printed by 'sluice migrate sql' as an owner."),
    COMMIT_OUTCOME_UNKNOWN(304, Category.STORAGE, true,
            "The connection failed while committing; the outcome is unknown.",
            "The database may or may not have committed the transaction: the reply was lost. Retrying a produce "
                    + "without an idempotency key can write the message twice. (Sluice replays on its own only work "
                    + "that is harmless twice, such as a fleet claim under its token.)",
            "Retry with the same idempotency key (a duplicate then returns the original id), or check the stream "
                    + "with 'sluice stream read' before retrying."),

    // 04xx: embedded server and tooling
    EMBEDDED_START_FAILED(400, Category.ENVIRONMENT, false,
            "The embedded PostgreSQL did not start.",
            "Starting the embedded server failed: the data directory may be in use by another process, not writable, "
                    + "or from another PostgreSQL major version.",
            "Stop the other process using --data-dir, choose another --data-dir, or pass --database-url to use your own server."),
    UNKNOWN_ERROR_CODE(401, Category.INVALID_INPUT, false,
            "No such error code.",
            "'sluice explain' was given a code that is not in the catalogue.",
            "Codes look like SLU-0100; see docs/errors.md for the full list."),
    TOOL_NOT_FOUND(402, Category.ENVIRONMENT, false,
            "A program the command runs is not installed.",
            "The command runs an external program (for example psql for 'sluice db psql') that is not on the PATH.",
            "Install it (Debian: apt-get install postgresql-client), or use 'sluice db url' with a client of your choice."),

    // 05xx: job queues and locks
    UNIQUE_KEY_TAKEN(500, Category.CONFLICT, false,
            "A live job already holds the unique key.",
            "Reviving a dead job would make a second live job with its (queue, unique key), which the queue never allows. "
                    + "Nothing was changed. (Enqueueing a duplicate is not an error: it returns the live job's id.)",
            "Wait until the live job with that key is acked or dead, or purge the dead job instead of reviving it."),
    PAYLOAD_NOT_DECODABLE(501, Category.INVALID_INPUT, false,
            "A stored job payload does not decode into the payload type.",
            "The bytes stored with the job cannot be read by the queue handle's serde (for example a JSON document that "
                    + "does not match the class, or a job enqueued by another application version). Workers move such "
                    + "jobs to the dead jobs at once (reason discarded), since retrying cannot help.",
            "Take the queue with a payload type that matches what producers enqueue (or byte[] to read the raw bytes), "
                    + "then revive the dead jobs."),
    JOB_CLAIM_LOST(502, Category.CONFLICT, false,
            "The job's claim is no longer held.",
            "An ack, retry, fail or heartbeat named a job and a claim token that do not match a processing job: the claim's "
                    + "visibility timeout ran out (another worker may hold the job now), the job was already resolved, or the "
                    + "token is not the job's. Nothing was changed.",
            "Heartbeat before the visibility timeout ends while working on a job; treat the job as handed back and do not "
                    + "resolve it again."),

    // 06xx: the HTTP server and its tokens
    UNAUTHORIZED(600, Category.PERMISSION, false,
            "The request has no valid bearer token.",
            "The server requires 'Authorization: Bearer <token>' on this route, and the request sent none, a malformed one, "
                    + "or a token that is unknown or revoked. The token itself is never printed.",
            "Create a token with 'sluice token create --role read|write|admin' and send it in the Authorization header."),
    FORBIDDEN(601, Category.PERMISSION, false,
            "The token's role does not allow this request.",
            "Roles are ordered read < write < admin: read lists and reads, write also produces, consumes, enqueues and "
                    + "resolves claims, admin also registers, destroys, redrives, purges, rewinds, revives and runs schedules.",
            "Use a token with the role the route needs (docs/server.md lists each route's role)."),
    OPEN_MODE_REFUSED(602, Category.ENVIRONMENT, false,
            "The server would be reachable from other hosts without any token.",
            "No API token exists, so every request would be let in; that is allowed only when the server binds a loopback "
                    + "address (127.0.0.0/8 or ::1). The server did not start.",
            "Create a token first ('sluice token create --role admin'), or bind to 127.0.0.1."),
    REQUEST_TOO_LARGE(603, Category.INVALID_INPUT, false,
            "The request body is larger than the route accepts.",
            "Request bodies are limited: a produced message to the stream's max_payload_bytes, a batch to 1,000 messages "
                    + "and the server's body limit (16 MiB by default), JSON documents to 1 MiB. Nothing was written and the "
                    + "body was not kept (at most 1 MiB more of it is read and dropped so the answer arrives; past that "
                    + "the connection closes).",
            "Send smaller bodies or split the batch; raise the server's --max-body if the stream allows larger payloads."),
    MALFORMED_REQUEST(604, Category.INVALID_INPUT, false,
            "The request is not well formed.",
            "The body is not the JSON document the route takes (unparseable, a field of the wrong type, an unknown "
                    + "outcome), a header or query parameter is out of range, or the path names no route.",
            "Correct the request; GET /api/v1/openapi.json describes every route's parameters and bodies."),
    CLAIM_EXPIRED(605, Category.CONFLICT, false,
            "The claim is unknown or its lease has ended.",
            "An outcome or a renewal named an HTTP claim that this server does not hold: its lease ended (its messages "
                    + "without an outcome are delivered again), every message of it already has an outcome, or the server "
                    + "restarted. Nothing was recorded for the messages named.",
            "Renew a claim before its lease ends while still working ('POST .../claims/{claim}:renew'); claim again to "
                    + "get the redelivered messages."),
    TOO_MANY_REQUESTS(606, Category.ENVIRONMENT, true,
            "The server is at its limit of concurrent waits or claimed messages.",
            "Long-polling claims and messages held by HTTP claims are bounded per server so that no client can hold every "
                    + "worker thread or every message; this request would pass the bound.",
            "Retry after the number of seconds in the Retry-After header, resolve held claims sooner, or run more servers."),
    TOKEN_NOT_FOUND(607, Category.NOT_FOUND, false,
            "No API token has that id or name.",
            "'sluice token revoke' (or Tokens.revoke) named a token that does not exist or is already revoked.",
            "List the tokens with 'sluice token list'."),
    SERVER_START_FAILED(608, Category.ENVIRONMENT, false,
            "The HTTP server could not start.",
            "The port is taken, the bind address is not one of this host's, or the process may not bind it.",
            "Choose another --port or --bind, or stop what holds the port."),
    TOKEN_NAME_TAKEN(609, Category.CONFLICT, false,
            "An active API token already has that name.",
            "Token names are unique among active tokens: 'sluice token create --name' (or Tokens.create) named one that "
                    + "an active token uses. No token was created. A revoked token's name is free again.",
            "Pick another name, revoke the token that holds it ('sluice token revoke NAME'), or leave the name out to "
                    + "get a generated one."),
    ROUTE_NOT_FOUND(610, Category.NOT_FOUND, false,
            "No HTTP route has that method and path.",
            "The server serves the API under /api/v1/, the metrics at /metrics and the dashboard at /; the request named "
                    + "none of their routes (or used a method the route does not take).",
            "Check the path and method against GET /api/v1/openapi.json.");

    /** Broad families of errors, for callers that branch on kind rather than code. */
    public enum Category { INVALID_INPUT, NOT_FOUND, CONFLICT, PERMISSION, MIGRATION, STORAGE, ENVIRONMENT }

    private final int number;
    private final Category category;
    private final boolean retryable;
    private final String title;
    private final String description;
    private final String fix;

    ErrorCode(int number, Category category, boolean retryable, String title, String description, String fix) {
        this.number = number;
        this.category = category;
        this.retryable = retryable;
        this.title = title;
        this.description = description;
        this.fix = fix;
    }

    /** The code as printed, for example {@code SLU-0100}. */
    public String code() {
        return String.format("SLU-%04d", number);
    }

    /** The family of the error. */
    public Category category() {
        return category;
    }

    /** Whether an unchanged retry can succeed. */
    public boolean retryable() {
        return retryable;
    }

    /** The one-line problem. */
    public String title() {
        return title;
    }

    /** What causes it. */
    public String description() {
        return description;
    }

    /** What to do about it. */
    public String fix() {
        return fix;
    }

    /** Looks a code up by its printed form ({@code SLU-0100}, {@code slu-100} or {@code 100}). */
    public static Optional<ErrorCode> lookup(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String t = text.trim().toUpperCase(java.util.Locale.ROOT);
        if (t.startsWith("SLU-")) {
            t = t.substring(4);
        }
        final int n;
        try {
            n = Integer.parseInt(t);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return Arrays.stream(values()).filter(c -> c.number == n).findFirst();
    }

    /** The whole catalogue as Markdown; {@code docs/errors.md} is exactly this text. */
    public static String markdownCatalogue() {
        StringBuilder out = new StringBuilder();
        out.append("# Error catalogue\n\n")
                .append("Every error Sluice raises is a `SluiceException` carrying one of these codes. Branch on the code\n")
                .append("(`e.code() == ErrorCode.STREAM_NOT_FOUND`) or on `e.retryable()`, never on message text.\n")
                .append("`sluice explain SLU-nnnn` prints an entry offline. This page is generated from\n")
                .append("`dev.sluice.ErrorCode` (a test fails when they differ; regenerate with\n")
                .append("`SLUICE_WRITE_DOCS=1 mvn -B -pl sluice-core test -Dtest=ErrorCatalogueTest`).\n\n")
                .append("| code | constant | category | retryable | problem |\n|---|---|---|---|---|\n");
        for (ErrorCode c : values()) {
            out.append("| ").append(c.code()).append(" | `").append(c.name()).append("` | ")
                    .append(c.category.name().toLowerCase(java.util.Locale.ROOT)).append(" | ")
                    .append(c.retryable ? "yes" : "no").append(" | ").append(c.title).append(" |\n");
        }
        for (ErrorCode c : values()) {
            out.append("\n## ").append(c.code()).append(" ").append(c.name()).append("\n\n")
                    .append("**").append(c.title).append("** ")
                    .append(c.retryable ? "Retryable: an unchanged retry can succeed." : "Not retryable: an unchanged retry cannot succeed.")
                    .append("\n\n*Cause.* ").append(c.description).append("\n\n*Fix.* ").append(c.fix).append("\n");
        }
        return out.toString();
    }

    /** The catalogue entry as plain text, as {@code sluice explain} prints it. */
    public String explain() {
        return code() + "  " + title + "\n"
                + "  category:  " + category.name().toLowerCase(java.util.Locale.ROOT) + "\n"
                + "  retryable: " + (retryable ? "yes" : "no") + "\n"
                + "  cause:     " + description + "\n"
                + "  fix:       " + fix + "\n";
    }
}
