package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The README's quickstart, kept compiling and passing. */
@SluiceTest
class QuickstartExampleTest {

    @Test
    void readmeQuickstartRuns(TestDatabase db) {
        DataSource ds = db.dataSource();
        Sluice sluice = Sluice.builder().dataSource(ds).schema(db.schema()).build();

        StreamInfo orders = sluice.stream("orders").register(StreamConfig.builder()
                .retention(Duration.ofDays(7))
                .build());
        sluice.stream("orders").rename("orders.v1");
        List<String> names = new ArrayList<>();
        sluice.streams().forEach(s -> names.add(s.name()));

        assertThat(orders.id()).isPositive();
        assertThat(names).containsExactly("orders.v1");
        assertThat(sluice.stream("orders.v1").get()).map(s -> s.config().retention()).contains(Duration.ofDays(7));
    }
}
