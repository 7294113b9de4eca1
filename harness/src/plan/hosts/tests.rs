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
lg2 ansible_host=10.0.0.6 ansible_user='bench_user'

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
            "lg2 bench_user@10.0.0.6 22 false [load] -"
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

#[test]
fn a_user_that_could_be_read_as_an_ssh_option_is_refused() {
    // `user = "-oProxyCommand=..."` was accepted and went to ssh before its `--`.
    for bad in ["-oProxyCommand=touch /tmp/x", "root@10.0.0.9", "a b", ""] {
        let text = format!(
            "[[host]]\nname = \"app\"\naddress = \"10.0.0.2\"\nuser = {bad:?}\nroles = [\"contender\"]\n"
        );
        let e = format!("{:#}", load_text("hosts.toml", &text).unwrap_err());
        assert!(
            e.contains("host app: user") && e.contains("is not a user name"),
            "{bad}: {e}"
        );
    }
    let ini = "[contender]\napp ansible_host=10.0.0.2 ansible_user=-oProxyCommand=x\n";
    let e = format!("{:#}", load_text("hosts", ini).unwrap_err());
    assert!(e.contains("is not a user name"), "{e}");
}

#[test]
fn nested_diamonds_of_groups_are_walked_once() {
    // 30 levels, each of two groups that are both children of the two groups above: the walk
    // went through every path, 2^30 of them (a 20-level diamond took 0.37 s, doubling per level).
    let levels = 30;
    let mut ini = String::from("[l0a]\napp ansible_host=10.0.0.2\n[l0b]\n");
    for i in 1..=levels {
        for side in ["a", "b"] {
            ini.push_str(&format!(
                "[l{i}{side}:children]\nl{}a\nl{}b\n",
                i - 1,
                i - 1
            ));
        }
    }
    ini.push_str(&format!("[contender:children]\nl{levels}a\n"));
    let t0 = std::time::Instant::now();
    let inv = load_text("hosts", &ini).unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(inv.hosts.len(), 1);
    assert!(inv.hosts[0].has(Role::Contender));
}

#[test]
fn ansible_settings_that_would_change_the_connection_are_refused_by_name() {
    for setting in [
        "ansible_ssh_common_args='-o ProxyJump=bastion'",
        "ansible_password=secret",
        "ansible_become=true",
        "ansible_connection=local",
    ] {
        let ini = format!("[contender]\napp ansible_host=10.0.0.2 {setting}\n");
        let e = format!("{:#}", load_text("hosts", &ini).unwrap_err());
        let key = setting.split('=').next().unwrap();
        assert!(
            e.contains(&format!(
                "host app: {key} is an Ansible setting iobound does not honour"
            )),
            "{setting}: {e}"
        );
    }
    // Group variables too.
    let ini =
        "[contender]\napp ansible_host=10.0.0.2\n[contender:vars]\nansible_ssh_extra_args=-A\n";
    assert!(
        format!("{:#}", load_text("hosts", ini).unwrap_err()).contains("ansible_ssh_extra_args")
    );
    let ok = "[contender]\napp ansible_host=10.0.0.2 ansible_python_interpreter=/usr/bin/python3 ansible_connection=ssh\n";
    assert_eq!(load_text("hosts", ok).unwrap().hosts.len(), 1);
}

#[test]
fn a_chain_deeper_than_the_cap_is_told_from_a_cycle() {
    // 40 groups, each the child of the next: no cycle, but deeper than the walk goes.
    let mut ini = String::from("[g0]\napp ansible_host=10.0.0.2\n");
    for i in 1..40 {
        ini.push_str(&format!("[g{i}:children]\ng{}\n", i - 1));
    }
    ini.push_str("[contender:children]\ng39\n");
    let e = format!("{:#}", load_text("hosts", &ini).unwrap_err());
    assert!(
        e.contains("nested more than") && !e.contains("form a cycle"),
        "{e}"
    );
    // A real cycle is called one, with its groups in order.
    let cycle =
        "[a]\napp ansible_host=10.0.0.2\n[a:children]\nb\n[b:children]\nc\n[c:children]\na\n";
    let e = format!("{:#}", load_text("hosts", cycle).unwrap_err());
    assert!(
        e.contains("form a cycle") && e.contains("a -> c -> b -> a"),
        "{e}"
    );
}
