import { Route, Switch } from 'wouter';
import { Layout } from './components/Layout';
import { SIGN_IN_PATH } from './lib/navigation';
import { DeploymentPage } from './pages/DeploymentPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { ProjectPage } from './pages/ProjectPage';
import { ProjectsPage } from './pages/ProjectsPage';
import { ServicePage } from './pages/ServicePage';
import { SignInPage } from './pages/SignInPage';
import { WebhookPage } from './pages/WebhookPage';

const SERVICE = '/projects/:projectId/services/:serviceId';

export function App() {
  return (
    <Switch>
      <Route path={SIGN_IN_PATH} component={SignInPage} />
      <Route>
        <Layout>
          <Switch>
            <Route path="/" component={ProjectsPage} />
            <Route path="/projects/:projectId" component={ProjectPage} />
            <Route path={SERVICE} component={ServicePage} />
            <Route path={`${SERVICE}/deployments/:deploymentId`} component={DeploymentPage} />
            <Route path="/projects/:projectId/webhooks/:webhookId" component={WebhookPage} />
            <Route component={NotFoundPage} />
          </Switch>
        </Layout>
      </Route>
    </Switch>
  );
}
