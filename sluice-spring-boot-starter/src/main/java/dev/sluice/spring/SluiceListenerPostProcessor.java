package dev.sluice.spring;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EmbeddedValueResolverAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Finds {@link SluiceListener} and {@link SluiceJob} methods on every bean (on the target class of a proxy), checks
 * them and collects them; {@link SluiceListenerContainer} starts them once the context is refreshed. A bad method
 * fails the bean's creation, so the context does not start ({@code SLU-0126 LISTENER_INVALID}).
 */
public class SluiceListenerPostProcessor implements BeanPostProcessor, EmbeddedValueResolverAware {
    private final List<ListenerEndpoint> endpoints = new CopyOnWriteArrayList<>();
    private StringValueResolver resolver;

    /** A post-processor without endpoints yet. */
    public SluiceListenerPostProcessor() {
    }

    /** Placeholders and SpEL in annotation values are resolved with the context's resolver. */
    @Override
    public void setEmbeddedValueResolver(StringValueResolver resolver) {
        this.resolver = resolver;
    }

    /** Collects and checks the bean's annotated methods (on its target class); returns the bean unchanged. */
    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> target = AopUtils.getTargetClass(bean);
        if (target.getName().startsWith("java.") || target.getName().startsWith("org.springframework.")) {
            return bean; // nothing of ours there; skips the scan of the context's own hundreds of beans
        }
        Map<Method, SluiceListener> listeners = MethodIntrospector.selectMethods(target,
                (MethodIntrospector.MetadataLookup<SluiceListener>) m -> AnnotatedElementUtils.findMergedAnnotation(m, SluiceListener.class));
        Map<Method, SluiceJob> jobs = MethodIntrospector.selectMethods(target,
                (MethodIntrospector.MetadataLookup<SluiceJob>) m -> AnnotatedElementUtils.findMergedAnnotation(m, SluiceJob.class));
        listeners.forEach((m, a) -> {
            if (jobs.containsKey(m)) {
                throw AnnotationValues.error(m.getDeclaringClass().getSimpleName() + "." + m.getName(),
                        "is annotated both @SluiceListener and @SluiceJob", null);
            }
            endpoints.add(ListenerEndpoint.stream(bean, m, invocable(m, bean), a, resolver));
        });
        jobs.forEach((m, a) -> endpoints.add(ListenerEndpoint.job(bean, m, invocable(m, bean), a, resolver)));
        return bean;
    }

    /** The method as callable on {@code bean} (the proxy's interface method for a JDK proxy), made accessible. */
    private static Method invocable(Method m, Object bean) {
        int mod = m.getModifiers();
        if (AopUtils.isCglibProxy(bean) && !java.lang.reflect.Modifier.isStatic(mod)
                && (java.lang.reflect.Modifier.isPrivate(mod) || java.lang.reflect.Modifier.isFinal(mod))) {
            // The subclass proxy cannot override it: called on the proxy it would run without the advice and on the
            // proxy's own (empty) fields instead of the bean's.
            throw AnnotationValues.error(m.getDeclaringClass().getSimpleName() + "." + m.getName(),
                    "is private or final on a proxied bean, which the proxy cannot delegate: make it public (or "
                            + "protected) and not final", null);
        }
        final Method invocable;
        try {
            invocable = AopUtils.selectInvocableMethod(m, bean.getClass());
        } catch (IllegalStateException e) {
            throw AnnotationValues.error(m.getDeclaringClass().getSimpleName() + "." + m.getName(),
                    "cannot be called through the bean's proxy (make it public, or declare it on the proxied interface)", e);
        }
        ReflectionUtils.makeAccessible(invocable);
        return invocable;
    }

    /** The endpoints found so far, in discovery order. */
    List<ListenerEndpoint> endpoints() {
        return List.copyOf(endpoints);
    }
}
