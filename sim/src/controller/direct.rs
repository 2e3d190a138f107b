//! Single reconciles run outside the event loop, against caches frozen at the moment of
//! `refresh`, with every write applied at once. For benches and for tests that count API calls.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::Poll;

use lws::profile::{GangScheduling, Profile};

use super::client::Caches;
use super::{perform, poll_once, start_reconcile, Which, LWS_ACTOR, POD_ACTOR};
use crate::api::ApiServer;
use crate::informer::Informer;

/// What one reconcile did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    pub reads: u32,
    pub writes: u32,
    pub ok: bool,
}

pub struct DirectReconciler {
    caches: Rc<RefCell<Caches>>,
    profile: Profile,
}

impl DirectReconciler {
    /// Caches holding what the API server holds now (no lag).
    pub fn new(api: &ApiServer, profile: Profile) -> DirectReconciler {
        let caches = Caches {
            lws: Informer::start(api, 0),
            statefulsets: Informer::start(api, 0),
            pods: Informer::start(api, 0),
            services: Informer::start(api, 0),
            nodes: Informer::start(api, 0),
            revisions: Informer::start(api, 0),
            disaggregatedsets: Informer::start(api, 0),
            rolescalers: Informer::start(api, 0),
            podgroups: (profile.flags.gang_scheduling == GangScheduling::Volcano)
                .then(|| Informer::start(api, 0)),
        };
        DirectReconciler {
            caches: Rc::new(RefCell::new(caches)),
            profile,
        }
    }

    /// Catch the caches up with the API server.
    pub fn refresh(&self, api: &ApiServer) {
        let now = api.now_ms();
        let mut c = self.caches.borrow_mut();
        c.lws.poll(api, now);
        c.statefulsets.poll(api, now);
        c.pods.poll(api, now);
        c.services.poll(api, now);
        c.nodes.poll(api, now);
        c.revisions.poll(api, now);
        c.disaggregatedsets.poll(api, now);
        c.rolescalers.poll(api, now);
        if let Some(p) = &mut c.podgroups {
            p.poll(api, now);
        }
    }

    pub fn reconcile_lws(&self, api: &mut ApiServer, namespace: &str, name: &str) -> Calls {
        self.run(api, Which::Lws, namespace, name)
    }

    pub fn reconcile_pod(&self, api: &mut ApiServer, namespace: &str, name: &str) -> Calls {
        self.run(api, Which::Pod, namespace, name)
    }

    fn run(&self, api: &mut ApiServer, which: Which, namespace: &str, name: &str) -> Calls {
        let key = (namespace.to_string(), name.to_string());
        let mut f = start_reconcile(
            which,
            key,
            self.caches.clone(),
            &self.profile,
            false,
            None,
            api.now_ms(),
        );
        let actor = if which == Which::Lws {
            LWS_ACTOR
        } else {
            POD_ACTOR
        };
        let mut writes = 0;
        loop {
            match poll_once(f.future.as_mut()) {
                Poll::Ready(result) => {
                    let reads = f.exchange.borrow().reads;
                    return Calls {
                        reads,
                        writes,
                        ok: result.is_ok(),
                    };
                }
                Poll::Pending => {
                    let op = f
                        .exchange
                        .borrow_mut()
                        .pending
                        .take()
                        .expect("a parked write");
                    let read = op.verb == "get";
                    let response = perform(api, actor, op);
                    f.exchange.borrow_mut().response = Some(response);
                    writes += u32::from(!read);
                }
            }
        }
    }
}
