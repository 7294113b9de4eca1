//! What a run of one kind has beyond the core every run has (record.rs): one typed detail per
//! kind of run. A run can have several: a capacity probe of a mix that writes has its probe,
//! its mix and its write check.
//!
//! In results.json the details are the flat, optional fields they have always been
//! (`entries`, `writes`, `events`, `recovery`, `overload`, `delivery`, `probe`), so results
//! written by earlier versions read unchanged and docs/results.schema.json still holds.
//! Adding a kind of run: a variant here with its field in `Fields`, the stage that fills it,
//! and its report section (report/sections.rs).

use super::faults::{EventRecord, OverloadVerdict, Recovery};
use crate::services::kafka::DeliveryCheck;
use crate::services::write_check::WriteCheck;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EntryResult {
    pub method: String,
    pub path: String,
    pub weight: u32,
    pub sent: u64,
    pub ok: u64,
}

/// One probe of a capacity search (run/kinds/capacity.rs): its rate and whether the SLO held.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Probe {
    /// The capacity scenario this probe belongs to.
    pub of: String,
    pub rate: f64,
    pub passed: bool,
    /// What broke: "p99 412.0 ms > 200 ms", "the driver fell behind" ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broke: Vec<String>,
    /// The driver could not offer the rate: the probe says nothing of the server.
    pub driver_limited: bool,
    /// Stopped before its time because the SLO was clearly broken.
    pub stopped_early: bool,
    /// False for a probe that began with the warm-up's backlog: it judges nothing.
    #[serde(default = "counted_default")]
    pub counted: bool,
    /// The search (the plan's round) it belongs to, from 1; 0 in results written before this
    /// was kept.
    #[serde(default)]
    pub search: u32,
}

fn counted_default() -> bool {
    true
}

/// One kind's part of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// A mix of requests: what each entry sent and had answered 2xx.
    Mix(Vec<EntryResult>),
    /// A mix that writes: every acknowledged write looked up in the database afterwards.
    Writes(WriteCheck),
    /// Downstream changes made during the measured phase, and how the contender came back
    /// after the fault they made (when one began and cleared).
    Faults {
        events: Vec<EventRecord>,
        recovery: Option<Recovery>,
    },
    /// The overload phase of an overload scenario: shed, queued or absorbed, and after.
    Overload(OverloadVerdict),
    /// A pipeline run: every record sent must arrive in the output topic.
    Delivery(DeliveryCheck),
    /// A probe of a capacity search: its rate and whether the SLO held. Probes are kept apart
    /// from the scenario's tables (their scenario is "<name>@<rate>").
    Probe(Probe),
}

/// A run's details, at most one of each kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details(Vec<Detail>);

impl Details {
    /// Adds `d`, replacing a detail of the same kind.
    pub fn set(&mut self, d: Detail) {
        let kind = std::mem::discriminant(&d);
        self.0.retain(|x| std::mem::discriminant(x) != kind);
        self.0.push(d);
    }

    pub fn iter(&self) -> impl Iterator<Item = &Detail> {
        self.0.iter()
    }

    pub fn entries(&self) -> &[EntryResult] {
        self.find(|d| match d {
            Detail::Mix(e) => Some(e.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
    }

    pub fn writes(&self) -> Option<&WriteCheck> {
        self.find(|d| match d {
            Detail::Writes(w) => Some(w),
            _ => None,
        })
    }

    pub fn events(&self) -> &[EventRecord] {
        self.find(|d| match d {
            Detail::Faults { events, .. } => Some(events.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
    }

    pub fn recovery(&self) -> Option<&Recovery> {
        self.find(|d| match d {
            Detail::Faults { recovery, .. } => recovery.as_ref(),
            _ => None,
        })
    }

    pub fn overload(&self) -> Option<&OverloadVerdict> {
        self.find(|d| match d {
            Detail::Overload(o) => Some(o),
            _ => None,
        })
    }

    pub fn delivery(&self) -> Option<&DeliveryCheck> {
        self.find(|d| match d {
            Detail::Delivery(c) => Some(c),
            _ => None,
        })
    }

    pub fn probe(&self) -> Option<&Probe> {
        self.find(|d| match d {
            Detail::Probe(p) => Some(p),
            _ => None,
        })
    }

    fn find<'a, T: ?Sized>(&'a self, pick: impl Fn(&'a Detail) -> Option<&'a T>) -> Option<&'a T> {
        self.0.iter().find_map(pick)
    }
}

/// The details as results.json has them: one optional field per kind.
#[derive(Default, Serialize, Deserialize)]
struct Fields {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    entries: Vec<EntryResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    writes: Option<WriteCheck>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    events: Vec<EventRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recovery: Option<Recovery>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    overload: Option<OverloadVerdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delivery: Option<DeliveryCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    probe: Option<Probe>,
}

impl Serialize for Details {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut f = Fields::default();
        for d in &self.0 {
            match d.clone() {
                Detail::Mix(e) => f.entries = e,
                Detail::Writes(w) => f.writes = Some(w),
                Detail::Faults { events, recovery } => (f.events, f.recovery) = (events, recovery),
                Detail::Overload(o) => f.overload = Some(o),
                Detail::Delivery(c) => f.delivery = Some(c),
                Detail::Probe(p) => f.probe = Some(p),
            }
        }
        f.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = Fields::deserialize(d)?;
        let mut out = Details::default();
        if !f.entries.is_empty() {
            out.set(Detail::Mix(f.entries));
        }
        if let Some(w) = f.writes {
            out.set(Detail::Writes(w));
        }
        if !f.events.is_empty() || f.recovery.is_some() {
            out.set(Detail::Faults {
                events: f.events,
                recovery: f.recovery,
            });
        }
        if let Some(o) = f.overload {
            out.set(Detail::Overload(o));
        }
        if let Some(c) = f.delivery {
            out.set(Detail::Delivery(c));
        }
        if let Some(p) = f.probe {
            out.set(Detail::Probe(p));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(rate: f64) -> Probe {
        crate::results::test_support::blank_probe(rate, 1)
    }

    #[test]
    fn a_kind_set_twice_is_kept_once_with_the_last_value() {
        let mut d = Details::default();
        d.set(Detail::Probe(probe(100.0)));
        d.set(Detail::Mix(Vec::new()));
        d.set(Detail::Probe(probe(200.0)));
        assert_eq!(d.iter().count(), 2);
        assert_eq!(d.probe().map(|p| p.rate), Some(200.0));
    }

    #[test]
    fn details_are_the_flat_fields_of_results_json_both_ways() {
        let text = r#"{"entries":[{"method":"GET","path":"/a","weight":1,"sent":5,"ok":4}],
            "probe":{"of":"wait","rate":100.0,"passed":true,"driver_limited":false,"stopped_early":false}}"#;
        let d: Details = serde_json::from_str(text).unwrap();
        assert_eq!(d.entries().len(), 1);
        assert_eq!(d.entries()[0].ok, 4);
        assert!(
            d.probe().is_some_and(|p| p.counted),
            "counted defaults to true"
        );
        assert!(d.overload().is_none() && d.recovery().is_none() && d.events().is_empty());
        let back = serde_json::to_value(&d).unwrap();
        let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["entries", "probe"], "absent kinds write no field");
        assert_eq!(serde_json::from_value::<Details>(back).unwrap(), d);
    }
}
