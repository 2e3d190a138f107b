//! The fake API server's verbs on a store of 1,000 pods: get, list by label selector (10
//! matches), create, update, server-side apply (changed and no-op), and watch delivery (an
//! informer taking one event).

use criterion::{criterion_group, criterion_main, Criterion};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lws_sim::api::{ApiServer, FeatureGates, Selector};
use lws_sim::informer::Informer;

mod common;

fn pod(i: usize) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("pod-{i}")),
            namespace: Some("default".into()),
            labels: Some(
                [
                    ("app".to_string(), format!("app-{}", i % 100)),
                    ("tier".to_string(), "x".to_string()),
                ]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("img:v1".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    }
}

fn server() -> ApiServer {
    let mut api = ApiServer::new(1, FeatureGates::for_minor(29));
    for i in 0..1000 {
        api.create("bench", pod(i)).unwrap();
    }
    api
}

fn apiserver(c: &mut Criterion) {
    let mut g = c.benchmark_group("apiserver");
    let mut api = server();
    g.bench_function("get", |b| {
        b.iter(|| api.get::<Pod>("default", "pod-500").unwrap())
    });
    let sel = Selector::labels([("app", "app-7")]);
    g.bench_function("list-by-label/1000-pods", |b| {
        b.iter(|| api.list::<Pod>(Some("default"), &sel))
    });
    let mut n = 1000;
    g.bench_function("create", |b| {
        b.iter(|| {
            n += 1;
            api.create("bench", pod(n)).unwrap()
        })
    });
    let mut flip = false;
    g.bench_function("update", |b| {
        b.iter(|| {
            flip = !flip;
            let mut p = (*api.get::<Pod>("default", "pod-1").unwrap()).clone();
            p.metadata.annotations = Some([("flip".to_string(), flip.to_string())].into());
            api.update("bench", p).unwrap()
        })
    });
    let sts = |image: &str| -> StatefulSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "c", "image": image}]}}
            }
        }))
        .unwrap()
    };
    let same = sts("img:v1");
    api.apply("lws", &same, true).unwrap();
    g.bench_function("apply/no-op", |b| {
        b.iter(|| api.apply("lws", &same, true).unwrap())
    });
    let (a, bb) = (sts("img:a"), sts("img:b"));
    let mut toggle = false;
    g.bench_function("apply/changed", |b| {
        b.iter(|| {
            toggle = !toggle;
            api.apply("lws", if toggle { &a } else { &bb }, true)
                .unwrap()
        })
    });
    let mut inf = Informer::<Pod>::start(&api, 0);
    g.bench_function("watch-delivery/one-event", |b| {
        b.iter(|| {
            n += 1;
            api.create("bench", pod(n)).unwrap();
            inf.poll(&api, 0).len()
        })
    });
    g.finish();
    let _ = common::measuring();
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = apiserver
}
criterion_main!(benches);
