package dev.sluice.spring;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.JobHandle;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.RetryPolicy;
import dev.sluice.StartPosition;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.List;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.util.StringValueResolver;

/**
 * One checked {@link SluiceListener} or {@link SluiceJob} method: what to consume and how to call it. Built (and every
 * value checked) when its bean is initialised, so a bad method fails startup before anything is consumed.
 *
 * @param kind         a stream listener or a queue job
 * @param description  {@code BeanClass.method} for logs, health and errors
 * @param bean         the bean as the context holds it (proxy included), which the method is called on
 * @param method       the method to call (the proxy's invocable one)
 * @param payloadType  the payload class ({@code byte[]} for an untyped {@code Message}/{@code JobHandle})
 * @param args         what each parameter receives
 * @param returnsOutcome whether a stream listener returns {@link Outcome} (else void)
 * @param stream       stream name (listeners)
 * @param group        group name (listeners)
 * @param queue        queue name (jobs)
 * @param register     register the stream and group when missing, update a differing declaration
 * @param policy       key policy, or null for the default or stored one
 * @param bindings     routing patterns, or null for the default or stored ones
 * @param start        start position of a new group, or null for the beginning
 * @param retry        the retry overrides, each null for the default or stored value
 * @param concurrency  handler invocations at once, or null for the property default
 * @param batchSize    claim size, or null for the property default
 * @param leaseTimeout lease, or null for the property default
 * @param shutdownTimeout drain wait, or null for the property default
 * @param prefetch     jobs held beyond the running handlers, or null for the property default
 */
record ListenerEndpoint(Kind kind, String description, Object bean, Method method, Class<?> payloadType, List<Arg> args,
                        boolean returnsOutcome, String stream, String group, String queue, boolean register,
                        ConcurrencyPolicy policy, List<String> bindings, StartPosition start, RetryOverrides retry,
                        Integer concurrency, Integer batchSize, Duration leaseTimeout, Duration shutdownTimeout,
                        Integer prefetch) {

    /** A stream listener or a queue job. */
    enum Kind { STREAM, JOB }

    /** What a parameter receives. */
    enum Arg { PAYLOAD, MESSAGE, JOB_HANDLE }

    /** The retry fields an annotation sets; each null when it leaves it. */
    record RetryOverrides(Integer maxAttempts, Duration initialBackoff, Duration maxBackoff) {
        boolean any() {
            return maxAttempts != null || initialBackoff != null || maxBackoff != null;
        }

        /** {@code base} with these overrides (the library checks the result: SLU-0003 for an inverted range). */
        RetryPolicy over(RetryPolicy base) {
            RetryPolicy b = base == null ? RetryPolicy.DEFAULT : base;
            return new RetryPolicy(maxAttempts != null ? maxAttempts : b.maxAttempts(),
                    initialBackoff != null ? initialBackoff : b.initialBackoff(), b.multiplier(),
                    maxBackoff != null ? maxBackoff : b.maxBackoff(), b.jitter());
        }
    }

    /** The name shown for this endpoint: {@code stream/group} or {@code queue:name}. */
    String target() {
        return kind == Kind.STREAM ? stream + "/" + group : "queue:" + queue;
    }

    /** Calls the method with the arguments for {@code payload}, {@code message} and {@code job}; unwraps what it threw. */
    Object invoke(Object payload, Message<?> message, JobHandle<?> job) throws Exception {
        Object[] values = new Object[args.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = switch (args.get(i)) {
                case PAYLOAD -> payload;
                case MESSAGE -> message;
                case JOB_HANDLE -> job;
            };
        }
        try {
            return method.invoke(bean, values);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /** Checks a {@link SluiceListener} method and reads its annotation. */
    static ListenerEndpoint stream(Object bean, Method declared, Method invocable, SluiceListener a, StringValueResolver r) {
        String where = describe(declared);
        AnnotationValues v = new AnnotationValues(r, "@SluiceListener " + where);
        Signature sig = signature(declared, where, Message.class, Arg.MESSAGE);
        Class<?> ret = declared.getReturnType();
        if (ret != void.class && ret != Outcome.class) {
            throw AnnotationValues.error("@SluiceListener " + where, "must return dev.sluice.Outcome or void (returns "
                    + ret.getName() + ")", null);
        }
        String stream = v.name("stream", a.stream());
        String group = v.name("group", a.group());
        List<String> bindings = null;
        if (a.bindings().length > 0) {
            if (a.bindings().length > 100) {
                throw v.invalid("bindings", "has more than 100 patterns", null);
            }
            java.util.ArrayList<String> list = new java.util.ArrayList<>();
            for (String raw : a.bindings()) {
                String b = v.text("bindings", raw);
                if (b == null) {
                    throw v.invalid("bindings", "holds an empty pattern", null);
                }
                try {
                    list.add(dev.sluice.BindingPattern.validate(b));
                } catch (dev.sluice.SluiceException e) {
                    throw v.invalid("bindings", e.problem(), e);
                }
            }
            bindings = List.copyOf(list);
        }
        RetryOverrides retry = new RetryOverrides(v.integer("maxAttempts", a.maxAttempts(), 1, 1000),
                v.duration("initialBackoff", a.initialBackoff()), v.duration("maxBackoff", a.maxBackoff()));
        try {
            retry.over(RetryPolicy.DEFAULT);
        } catch (dev.sluice.SluiceException e) {
            throw v.invalid("initialBackoff/maxBackoff", e.problem(), e);
        }
        return new ListenerEndpoint(Kind.STREAM, where, bean, invocable, sig.payloadType, sig.args, ret == Outcome.class,
                stream, group, null, v.bool("register", a.register()), v.policy("concurrencyPolicy", a.concurrencyPolicy()),
                bindings, v.start("start", a.start()), retry, v.integer("concurrency", a.concurrency(), 1, 10_000),
                v.integer("batchSize", a.batchSize(), 1, 10_000), v.duration("leaseTimeout", a.leaseTimeout()),
                v.duration("shutdownTimeout", a.shutdownTimeout()), null);
    }

    /** Checks a {@link SluiceJob} method and reads its annotation. */
    static ListenerEndpoint job(Object bean, Method declared, Method invocable, SluiceJob a, StringValueResolver r) {
        String where = describe(declared);
        AnnotationValues v = new AnnotationValues(r, "@SluiceJob " + where);
        Signature sig = signature(declared, where, JobHandle.class, Arg.JOB_HANDLE);
        return new ListenerEndpoint(Kind.JOB, where, bean, invocable, sig.payloadType, sig.args, false, null, null,
                v.name("queue", a.queue()), false, null, null, null, null, v.integer("concurrency", a.concurrency(), 1, 10_000),
                null, null, v.duration("shutdownTimeout", a.shutdownTimeout()), v.integer("prefetch", a.prefetch(), 0, 1000));
    }

    private record Signature(Class<?> payloadType, List<Arg> args) {
    }

    /**
     * (payload), (Wrapper&lt;T&gt;) or (payload, Wrapper&lt;T&gt;), where the wrapper is {@code Message} or
     * {@code JobHandle}; the payload class is the parameter's, or the wrapper's type argument ({@code byte[]} when
     * raw or a wildcard).
     */
    private static Signature signature(Method m, String where, Class<?> wrapper, Arg wrapperArg) {
        String kind = wrapper == Message.class ? "@SluiceListener " : "@SluiceJob ";
        String shape = "must take the payload, a " + wrapper.getSimpleName() + "<T>, or both (payload first)";
        int n = m.getParameterCount();
        if (n < 1 || n > 2) {
            throw AnnotationValues.error(kind + where, shape + " (takes " + n + " parameters)", null);
        }
        Class<?>[] types = m.getParameterTypes();
        if (n == 1 && types[0] == wrapper) {
            return new Signature(typeArgument(m, 0, where, kind), List.of(wrapperArg));
        }
        if (types[0] == Message.class || types[0] == JobHandle.class) {
            throw AnnotationValues.error(kind + where, shape + " (its first parameter is a " + types[0].getSimpleName() + ")", null);
        }
        Class<?> payload = payloadClass(types[0], where, kind);
        if (n == 1) {
            return new Signature(payload, List.of(Arg.PAYLOAD));
        }
        if (types[1] != wrapper) {
            throw AnnotationValues.error(kind + where, shape + " (its second parameter is " + types[1].getName() + ")", null);
        }
        Class<?> declared = ResolvableType.forMethodParameter(new MethodParameter(m, 1)).getGeneric(0).resolve();
        if (declared != null && declared != payload) {
            throw AnnotationValues.error(kind + where, "its " + wrapper.getSimpleName() + " type argument ("
                    + declared.getName() + ") differs from its payload parameter (" + payload.getName() + ")", null);
        }
        return new Signature(payload, List.of(Arg.PAYLOAD, wrapperArg));
    }

    private static Class<?> typeArgument(Method m, int index, String where, String kind) {
        Class<?> t = ResolvableType.forMethodParameter(new MethodParameter(m, index)).getGeneric(0).resolve();
        return t == null ? byte[].class : payloadClass(t, where, kind);
    }

    private static Class<?> payloadClass(Class<?> t, String where, String kind) {
        if (t.isPrimitive() || t == Object.class || t == CharSequence.class || t == Outcome.class) {
            throw AnnotationValues.error(kind + where, "has a payload type Sluice cannot decode (" + t.getName()
                    + "): use byte[], String or a concrete JSON-mapped class", null);
        }
        return t;
    }

    private static String describe(Method m) {
        String s = m.getDeclaringClass().getSimpleName() + "." + m.getName();
        return Modifier.isStatic(m.getModifiers()) ? s + " (static)" : s;
    }
}
