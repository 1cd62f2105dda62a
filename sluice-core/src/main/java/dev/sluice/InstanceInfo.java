package dev.sluice;

import java.time.Instant;

/**
 * One live copy of a worker ({@code sluice.fleet().instances()}).
 *
 * @param id        the {@code worker_instance} row's id
 * @param worker    the worker's key ({@link WorkerInfo#key()})
 * @param holder    the process that holds it (the client id, {@code host:pid} by default)
 * @param state     active, standby, paused — or expired when its process stopped renewing and the manager has not
 *                  cleaned it up yet
 * @param failures  how often this holder's earlier instance of the worker was lost (lease expired) before this claim
 * @param createdAt when it was claimed
 * @param renewedAt its last heartbeat
 * @param expiresAt when it expires unless renewed
 */
public record InstanceInfo(long id, String worker, String holder, InstanceState state, int failures, Instant createdAt,
                           Instant renewedAt, Instant expiresAt) {
}
