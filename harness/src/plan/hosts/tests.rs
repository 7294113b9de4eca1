//! The inventory formats and their errors.

use super::ansible::split_words;
use super::*;

fn load_text(name: &str, text: &str) -> Result<Inventory> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    Inventory::load(&path)
}

fn summary(inv: &Inventory) -> Vec<String> {
    inv.hosts
        .iter()
        .map(|h| {
            let roles: Vec<_> = h.roles.iter().map(|r| r.name()).collect();
            format!(
                "{} {} {} {} [{}] {}",
                h.name,
                h.destination(),
                h.port,
                h.identity.is_some(),
                roles.join(","),
                h.cpus.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

const THREE_HOSTS: [&str; 3] = [
    "app root@10.0.0.2 22 false [contender] 0-3",
    "db root@10.0.0.3 22 false [services] -",
    "gen root@10.0.0.4 2222 false [load] -",
];

#[test]
fn the_three_formats_give_the_same_hosts() {
    let toml = r#"
[[host]]
name = "app"
address = "10.0.0.2"
user = "root"
roles = ["contender"]
cpus = "0-3"

[[host]]
name = "db"
address = "10.0.0.3"
user = "root"
roles = ["services"]

[[host]]
name = "gen"
address = "10.0.0.4"
user = "root"
port = 2222
roles = ["load"]
"#;
    let ini = "
# Ansible INI
[contender]
app ansible_host=10.0.0.2 iobound_cpus=0-3

[services]
db ansible_host=10.0.0.3

[load]
gen ansible_host=10.0.0.4 ansible_port=2222

[all:vars]
ansible_user=root
";
    let yaml = "
all:
  vars:
    ansible_user: root
  children:
    contender:
      hosts:
        app:
          ansible_host: 10.0.0.2
          iobound_cpus: 0-3
    services:
      hosts:
        db: {ansible_host: 10.0.0.3}
    load:
      hosts:
        gen:
          ansible_host: 10.0.0.4
          ansible_port: 2222
";
    for (name, text) in [("h.toml", toml), ("hosts", ini), ("hosts.yml", yaml)] {
        let inv = load_text(name, text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let mut got = summary(&inv);
        got.sort();
        assert_eq!(got, THREE_HOSTS, "{name}");
    }
}

#[test]
fn ansible_children_and_several_groups_give_several_roles() {
    let ini = "
[edge]
lg1 ansible_host=10.0.0.5
lg2 ansible_host=10.0.0.6 ansible_user='bench user'

[load:children]
edge

[services]
lg1

[edge:vars]
ansible_user=ops
";
    let inv = load_text("inventory.ini", ini).unwrap();
    let mut got = summary(&inv);
    got.sort();
    assert_eq!(
        got,
        [
            "lg1 ops@10.0.0.5 22 false [services,load] -",
            "lg2 bench user@10.0.0.6 22 false [load] -"
        ]
    );
}

#[test]
fn bad_inventories_name_the_host_the_field_and_the_fix() {
    let cases = [
        ("h.toml", "[[host]]\nname = \"a\"\naddress = \"app.example\"\nroles = [\"load\"]\n", "address \"app.example\" is not an IP address"),
        ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"db\"]\n", "role \"db\" is unknown; roles are contender, services and load"),
        ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = []\n", "host a has no role"),
        ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"load\"]\ncpus = \"x\"\n", "host a: cpus \"x\""),
        ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"load\"]\nidentity = \"/nonexistent/key\"\n", "identity \"/nonexistent/key\": no such file"),
        ("h.toml", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nroles = [\"contender\"]\n[[host]]\nname = \"b\"\naddress = \"10.0.0.2\"\nroles = [\"contender\"]\n", "2 hosts have the role \"contender\""),
        ("h.toml", "", "no hosts"),
        ("hosts", "[load]\na ansible_host=10.0.0.1 ansible_port=ssh\n", "port \"ssh\" is not a TCP port"),
        ("hosts", "[load]\na ansible_host=10.0.0.1 colour\n", "\"colour\" after the host name is not key=value"),
        ("hosts", "[load:children]\nnowhere\n", "child group \"nowhere\", which is not defined"),
        ("hosts", "[load]\na ansible_host=10.0.0.1 flavour=x\n", "unknown field \"flavour\""),
        ("hosts.yml", "load: [1, 2]\n", "not an Ansible YAML inventory"),
    ];
    for (name, text, want) in cases {
        let err = format!("{:#}", load_text(name, text).unwrap_err());
        assert!(err.contains(want), "{name} {text:?}: {err}");
    }
}

#[test]
fn quoted_words_stay_whole() {
    assert_eq!(
        split_words("h a='x y' b=\"1 2\" c=3").unwrap(),
        ["h", "a=x y", "b=1 2", "c=3"]
    );
    assert!(split_words("h a='x").is_err());
}
