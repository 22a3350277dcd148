module mpi-controller/hack/tools/mpi-operator-v0.2

go 1.26.8

replace k8s.io/api => k8s.io/api v0.15.10

replace k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.15.10

replace k8s.io/apimachinery => k8s.io/apimachinery v0.15.10

replace k8s.io/apiserver => k8s.io/apiserver v0.15.10

replace k8s.io/cli-runtime => k8s.io/cli-runtime v0.15.10

replace k8s.io/client-go => k8s.io/client-go v0.15.10

replace k8s.io/cloud-provider => k8s.io/cloud-provider v0.15.10

replace k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.15.10

replace k8s.io/code-generator => k8s.io/code-generator v0.15.10

replace k8s.io/component-base => k8s.io/component-base v0.15.10

replace k8s.io/cri-api => k8s.io/cri-api v0.15.10

replace k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.15.10

replace k8s.io/klog => k8s.io/klog v1.0.0

replace k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.15.10

replace k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.15.10

replace k8s.io/kube-proxy => k8s.io/kube-proxy v0.15.10

replace k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.15.10

replace k8s.io/kubectl => k8s.io/kubectl v0.15.10

replace k8s.io/kubelet => k8s.io/kubelet v0.15.10

replace k8s.io/legacy-cloud-providers => k8s.io/legacy-cloud-providers v0.15.10

replace k8s.io/metrics => k8s.io/metrics v0.15.10

replace k8s.io/node-api => k8s.io/node-api v0.15.10

replace k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.15.10

replace k8s.io/sample-cli-plugin => k8s.io/sample-cli-plugin v0.15.10

replace k8s.io/sample-controller => k8s.io/sample-controller v0.15.10

replace vbom.ml/util => github.com/fvbommel/util v0.0.0-20160121211510-db5cfe13f5cc

require (
	github.com/PuerkitoBio/purell v1.1.1 // indirect
	github.com/PuerkitoBio/urlesc v0.0.0-20170810143723-de5bf2ad4578 // indirect
	github.com/beorn7/perks v0.0.0-20180321164747-3a771d992973 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/emicklei/go-restful v2.9.6+incompatible // indirect
	github.com/go-openapi/jsonpointer v0.19.2 // indirect
	github.com/go-openapi/jsonreference v0.19.2 // indirect
	github.com/go-openapi/spec v0.19.2 // indirect
	github.com/go-openapi/swag v0.19.4 // indirect
	github.com/gogo/protobuf v1.2.2-0.20190723190241-65acae22fc9d // indirect
	github.com/golang/groupcache v0.0.0-20190129154638-5b532d6fd5ef // indirect
	github.com/golang/protobuf v1.3.1 // indirect
	github.com/google/go-cmp v0.3.0 // indirect
	github.com/google/gofuzz v1.0.0 // indirect
	github.com/google/uuid v1.1.1 // indirect
	github.com/googleapis/gnostic v0.2.0 // indirect
	github.com/hashicorp/golang-lru v0.5.1 // indirect
	github.com/imdario/mergo v0.3.7 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/kubeflow/common v0.0.0-20200313171840-64f943084a05 // indirect
	github.com/kubeflow/mpi-operator v0.2.3 // indirect
	github.com/kubernetes-sigs/kube-batch v0.5.0 // indirect
	github.com/mailru/easyjson v0.0.0-20190626092158-b2ccc519800e // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.1 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/prometheus/client_golang v0.9.2 // indirect
	github.com/prometheus/client_model v0.0.0-20190115171406-56726106282f // indirect
	github.com/prometheus/common v0.1.0 // indirect
	github.com/prometheus/procfs v0.0.0-20190117184657-bf6a532e95b1 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
	golang.org/x/crypto v0.0.0-20200220183623-bac4c82f6975 // indirect
	golang.org/x/net v0.0.0-20190812203447-cdfb69ac37fc // indirect
	golang.org/x/oauth2 v0.0.0-20190604053449-0f29369cfe45 // indirect
	golang.org/x/sys v0.0.0-20190616124812-15dcb6c0061f // indirect
	golang.org/x/text v0.3.2 // indirect
	golang.org/x/time v0.0.0-20190308202827-9d24e82272b4 // indirect
	google.golang.org/appengine v1.5.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v2 v2.2.8 // indirect
	k8s.io/api v0.15.10 // indirect
	k8s.io/apimachinery v0.16.9-beta.0 // indirect
	k8s.io/apiserver v0.15.10 // indirect
	k8s.io/client-go v10.0.0+incompatible // indirect
	k8s.io/klog v1.0.0 // indirect
	k8s.io/kube-openapi v0.0.0-20190816220812-743ec37842bf // indirect
	k8s.io/sample-controller v0.0.0-00010101000000-000000000000 // indirect
	k8s.io/utils v0.0.0-20190801114015-581e00157fb1 // indirect
	sigs.k8s.io/yaml v1.1.0 // indirect
)
