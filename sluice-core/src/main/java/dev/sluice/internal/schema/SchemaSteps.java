package dev.sluice.internal.schema;

import java.util.List;

/**
 * The migration steps of each scope, in order. {@link #RELEASED} is what this code ships (append
 * only: never edit a released step, add the next version). Tests build other catalogues to simulate
 * a database that is older than the code.
 */
public record SchemaSteps(List<MigrationStep> system, List<MigrationStep> stream) {

    /** The steps shipped with this code. */
    public static final SchemaSteps RELEASED = new SchemaSteps(
            List.of(MigrationStep.load(Scope.SYSTEM, 1, "control_plane"), MigrationStep.load(Scope.SYSTEM, 2, "schedules"),
                    MigrationStep.load(Scope.SYSTEM, 3, "fleet"), MigrationStep.load(Scope.SYSTEM, 4, "shards"),
                    MigrationStep.load(Scope.SYSTEM, 5, "job_runs"), MigrationStep.load(Scope.SYSTEM, 6, "api_tokens")),
            List.of(MigrationStep.load(Scope.STREAM, 1, "family"), MigrationStep.load(Scope.STREAM, 2, "fence_holders"),
                    MigrationStep.load(Scope.STREAM, 3, "cursor_versions"), MigrationStep.load(Scope.STREAM, 4, "partitions"),
                    MigrationStep.load(Scope.STREAM, 5, "exception_row_size"),
                    MigrationStep.load(Scope.STREAM, 6, "bucket_runs"), MigrationStep.load(Scope.STREAM, 7, "bucket_run_tops")));

    public SchemaSteps {
        system = List.copyOf(system);
        stream = List.copyOf(stream);
        check(system);
        check(stream);
    }

    private static void check(List<MigrationStep> steps) {
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).version() != i + 1) {
                throw new IllegalArgumentException("steps must be numbered 1..n without gaps: " + steps.get(i).stepName());
            }
        }
    }

    public List<MigrationStep> of(Scope scope) {
        return scope == Scope.SYSTEM ? system : stream;
    }

    /** The newest version of a scope. */
    public int codeVersion(Scope scope) {
        List<MigrationStep> steps = of(scope);
        return steps.get(steps.size() - 1).version();
    }

    /** These steps plus one more (for tests of the version gates). */
    public SchemaSteps plus(Scope scope, String name, String template) {
        java.util.ArrayList<MigrationStep> steps = new java.util.ArrayList<>(of(scope));
        steps.add(new MigrationStep(scope, steps.size() + 1, name, template, MigrationStep.sha256(template)));
        return scope == Scope.SYSTEM ? new SchemaSteps(steps, stream) : new SchemaSteps(system, steps);
    }
}
